"""Listwise reranking through math2.llm against the fake OpenAI server: the order the model
gives, the cache, and a bad answer or a dead endpoint that keep the fused order."""

import asyncio

from math2.llm import Endpoint, LLMClient, MemoryCache
from math2.llm.testing import FakeServer
from math2.llm.testing.fake_server import Rule, Script
from math2.retrieval.index import Hit
from math2.retrieval.rerank import Reranker

HITS = [Hit(mention_id=i, name=f"N.decl{i}", score=1.0 / (i + 1)) for i in range(5)]
STATEMENTS = {i: f": statement {i}" for i in range(5)}


def run(base_url: str, query: str, cache=None, hits=HITS, top: int = 4):
    client = LLMClient(Endpoint(base_url=base_url, model="fake-model", max_retries=0), cache)

    async def go():
        try:
            return await Reranker(client, top=top).rerank(query, hits, STATEMENTS)
        finally:
            await client.aclose()

    return asyncio.run(go())


def script() -> Script:
    return Script(
        rules=[
            Rule(user="good query", json={"ranking": [3, 1, 3, 99]}),
            Rule(user="bad query", reply="the third one, I think"),
        ]
    )


def test_model_order_first_then_the_rest_then_the_tail() -> None:
    cache = MemoryCache()
    with FakeServer(script()) as srv:
        res = run(srv.base_url, "good query", cache)
        assert res.reranked and res.error is None and not res.cached
        # 3 then 1 (duplicates and unknown numbers dropped), then 2 and 4 unranked, then hit 5
        assert [h.mention_id for h in res.hits] == [2, 0, 1, 3, 4]
        first_calls = len(srv.requests)
        again = run(srv.base_url, "good query", cache)
        assert again.cached and len(srv.requests) == first_calls  # no second model call
        assert [h.mention_id for h in again.hits] == [2, 0, 1, 3, 4]
        prompt = srv.requests[0]["body"]["messages"][-1]["content"]
        assert "[1] N.decl0 : statement 0" in prompt and "N.decl4" not in prompt
    assert res.template.startswith("retrieval/rerank@1 ")


def test_unreadable_answer_keeps_fused_order_and_is_not_asked_again() -> None:
    cache = MemoryCache()
    with FakeServer(script()) as srv:
        res = run(srv.base_url, "bad query", cache)
        assert len(srv.requests) == 2  # one retry, then it gives up
        again = run(srv.base_url, "bad query", cache)
        assert len(srv.requests) == 2  # both unreadable replies came from the cache
    assert not res.reranked and "Ranking" in res.error and not res.cached
    assert [h.mention_id for h in res.hits] == [0, 1, 2, 3, 4]
    assert again.cached and not again.reranked and again.error == res.error


def test_dead_endpoint_keeps_fused_order() -> None:
    with FakeServer(script()) as srv:
        url = srv.base_url
    res = run(url, "good query")
    assert not res.reranked and res.error
    assert res.hits == HITS


def test_search_command_reranks_with_a_registered_model(tmp_path, monkeypatch) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from math2.cli import app
    from math2.llm import add_model
    from math2.store import Store

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"
    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "index"))
    r = CliRunner()
    assert r.invoke(app, ["init"]).exit_code == 0
    assert r.invoke(app, ["import", "mathlib", str(fixture)]).exit_code == 0
    assert r.invoke(app, ["index", "build", "--no-dense"]).exit_code == 0
    res = r.invoke(app, ["search", "idf apply", "--rerank", "ranker"])
    assert res.exit_code == 2 and "ranker" in res.stderr  # not in the register
    with Store(f"sqlite:///{tmp_path / 'c.db'}").session() as s:
        add_model(s, "ranker", provider="fake")
    # the model puts the second fused hit first
    rules = [Rule(user="idf apply", json={"ranking": [2]})]
    with FakeServer(Script(rules=rules, models=["ranker"])) as srv:
        monkeypatch.setenv("MATH2_LLM__BASE_URL", srv.base_url)
        plain = r.invoke(app, ["search", "idf apply", "-k", "2"])
        res = r.invoke(app, ["search", "idf apply", "-k", "2", "--rerank", "ranker"])
        again = r.invoke(app, ["search", "idf apply", "-k", "2", "--rerank", "ranker"])
        calls = len(srv.requests)
    assert res.exit_code == 0, res.output
    assert "reranked by ranker with retrieval/rerank@1" in res.stderr
    first, second = (
        ln.split()[1] for ln in plain.output.splitlines() if ln[:3].strip()[:1].isdigit()
    )
    ranked = [ln.split()[1] for ln in res.output.splitlines() if ln[:3].strip()[:1].isdigit()]
    assert ranked == [second, first]
    assert "(cached)" in again.stderr and calls == 1
