"""`math2 search --rerank` with a real model (llama.cpp's server, SmolLM2-135M): whatever the
small model answers, every fused hit is still there, the outcome is stated, and the second
search is answered from the cache (an unreadable answer is cached too: no second call)."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from math2.cli import app

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def _names(output: str) -> list[str]:
    return [ln.split()[1] for ln in output.splitlines() if ln[:3].strip()[:1].isdigit()]


@pytest.mark.llm
def test_rerank_with_smollm2(tmp_path, monkeypatch, llama_server) -> None:
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("MATH2_LLM__BASE_URL", llama_server.base_url)
    monkeypatch.setenv("MATH2_LLM__TIMEOUT_S", "180")
    r = CliRunner()
    assert r.invoke(app, ["init"]).exit_code == 0
    assert r.invoke(app, ["import", "mathlib", str(FIX)]).exit_code == 0
    assert r.invoke(app, ["index", "build", "--no-dense"]).exit_code == 0
    add = r.invoke(
        app,
        ["models", "add", llama_server.model, "--provider", "llama.cpp", "--terms", "Apache-2.0"],
    )
    assert add.exit_code == 0, add.output
    query = ["search", "add comm identity", "-k", "8"]
    plain = r.invoke(app, query)
    res = r.invoke(app, [*query, "--rerank", llama_server.model])
    assert res.exit_code == 0, res.output
    # reranked, or not reranked with the reason: a small model's answer never loses a hit
    assert f"reranked by {llama_server.model} with retrieval/rerank@1" in res.stderr or (
        "not reranked (" in res.stderr
    )
    assert sorted(_names(res.output)) == sorted(_names(plain.output)) != []
    again = r.invoke(app, [*query, "--rerank", llama_server.model])
    assert "(cached)" in again.stderr and _names(again.output) == _names(res.output)
