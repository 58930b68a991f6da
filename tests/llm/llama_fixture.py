"""The `llama_server` fixture: llama.cpp's server with SmolLM2-135M, once per test session.

A test that uses it is marked `llm`. Where the binary or the model is not installed the test is
skipped with the command that installs them — except where MATH2_REQUIRE_LLM or CI is set
(scripts/test.sh sets it), where that is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from math2.llm.testing.llama import LlamaNotInstalled, LlamaServer


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[LlamaServer]:
    try:
        srv = LlamaServer(log_path=tmp_path_factory.mktemp("llama") / "llama-server.log")
    except LlamaNotInstalled as exc:
        if os.environ.get("MATH2_REQUIRE_LLM") or os.environ.get("CI"):
            pytest.fail(f"{exc} (MATH2_REQUIRE_LLM is set)")
        pytest.skip(str(exc))
    with srv:
        yield srv
