"""Test doubles for model endpoints: a fake OpenAI-compatible server over real HTTP."""

from math2.llm.testing.fake_server import FakeServer, Rule, Script, load_script

__all__ = ["FakeServer", "Rule", "Script", "load_script"]
