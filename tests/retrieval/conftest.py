from tests.llm.llama_fixture import llama_server

__all__ = ["llama_server"]
