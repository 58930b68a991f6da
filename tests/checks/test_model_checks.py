"""Model checks end to end: fake OpenAI server over HTTP, fake Lean REPL, real store."""

from __future__ import annotations

import asyncio
import json
from functools import partial

import pytest
from sqlalchemy import select

from math2.checks import default_config, run_checks
from math2.checks.lints import LINTS
from math2.config import Settings
from math2.errors import InputError
from math2.llm import UnregisteredModel, add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.store.work import CheckResultRow
from tests.settings import REPL_RULES, settings_for

JUDGE = "check whether a Lean 4 statement"
BACK = "translate Lean 4 theorem statements"
NLI = "compare two mathematical statements"

PAIRS = [
    {
        "id": "one",
        "informal": "ONE: one plus one is two.",
        "formal": "theorem one : 1 + 1 = 2 := by sorry",
    },
    {
        "id": "two",
        "informal": "TWO: every prime $p$ above two is odd.",
        "formal": "theorem two (p : ℕ) (hp : p.Prime) : Odd p := by sorry",
    },
    {
        "id": "three",
        "informal": "THREE: the judge answers garbage about $x$.",
        "formal": "theorem three (x : ℕ) : x = x + 0 := by sorry",
    },
    {
        "id": "four",
        "informal": "FOUR: two is even.",
        "formal": "theorem four : Evn 2 := by sorry",
    },
]


def script() -> Script:
    ok = {"consistent": True, "defects": []}
    bad = {
        "consistent": False,
        "defects": [
            {"kind": "missing_precondition", "clause": "above two", "explanation": "p > 2"}
        ],
    }
    return Script(
        models=["judge", "judge2", "trans"],
        rules=[
            Rule(model="^judge2$", system=JUDGE, json=ok),
            Rule(
                model="^judge$",
                system=JUDGE,
                user="THREE|could not be read",
                reply="Looks fine to me!",
            ),
            Rule(model="^judge$", system=JUDGE, user="TWO", json=bad),
            Rule(model="^judge$", system=JUDGE, json=ok),
            Rule(system=BACK, user="theorem one", reply="BACK-ONE: 1 + 1 = 2."),
            Rule(system=BACK, user="theorem two", reply="BACK-TWO: every prime is odd."),
            Rule(system=BACK, reply="BACK-OTHER: something."),
            Rule(system=NLI, user="BACK-ONE", json={"equivalent": True, "differences": []}),
            Rule(
                system=NLI,
                user="BACK-TWO",
                json={"equivalent": False, "differences": ["'above two' is dropped"]},
            ),
            Rule(system=NLI, user="BACK-OTHER", reply="{not json"),
        ],
    )


# the fake REPL rejects only an unknown `Evn`; one Lean worker
settings_for = partial(settings_for, rules=REPL_RULES[:1], workers=1)


@pytest.fixture
def store(sqlite_store):
    with sqlite_store.session() as s:
        for m in ("judge", "judge2", "trans"):
            add_model(s, m, provider="fake")
    return sqlite_store


def write(path, rows) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def verdicts(store) -> dict:
    with store.session() as s:
        rows = s.scalars(select(CheckResultRow))
        return {(r.pair_key, r.check, r.checker): r for r in rows}


def by_pair(store) -> dict:
    from math2.checks import pair_key

    keys = {pair_key(p["informal"], p["formal"]): p["id"] for p in PAIRS}
    out: dict = {}
    for (k, check, checker), r in verdicts(store).items():
        out.setdefault(keys[k], {})[f"{check}@{checker}" if checker else check] = r
    return out


def test_battery_with_two_judges_backtranslation_and_compile(tmp_path, store):
    inp = tmp_path / "pairs.jsonl"
    write(inp, PAIRS)
    config = default_config(judges=["judge", "judge2"], translator="trans", compile=True)
    with FakeServer(script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        summary = asyncio.run(run_checks(st, store, inp, config))
        first = len(srv.requests)
        # the same battery again: the run resumes, every pair is done, no model is asked again
        again = asyncio.run(run_checks(st, store, inp, config))
        assert len(srv.requests) == first
        requests = list(srv.requests)
    assert summary.done == 4 and summary.failed == 0 and again.skipped == 4
    res = by_pair(store)
    one, two, three, four = res["one"], res["two"], res["three"], res["four"]
    assert one["consistency@judge"].verdict == "pass"
    assert one["consistency@judge2"].verdict == "pass"  # side by side
    assert one["backtranslation@trans+trans"].verdict == "pass"
    assert one["backtranslation@trans+trans"].evidence["back_translation"].startswith("BACK-ONE")
    assert one["compile@lean"].verdict == "pass"
    assert one["consistency@judge"].attempt_id is not None
    # the defect, with its clause
    c = two["consistency@judge"]
    assert c.verdict == "fail"
    assert c.evidence["defects"][0] == {
        "kind": "missing_precondition",
        "clause": "above two",
        "explanation": "p > 2",
    }
    assert two["consistency@judge2"].verdict == "pass"
    assert two["backtranslation@trans+trans"].verdict == "fail"
    assert two["backtranslation@trans+trans"].evidence["differences"] == ["'above two' is dropped"]
    # malformed judge output: retried, then a clear error — never a pass
    bad = three["consistency@judge"]
    assert bad.verdict == "error" and "no valid JudgeVerdict" in bad.evidence["reason"]
    assert (
        sum(
            1
            for r in requests
            if r["body"]["model"] == "judge"
            and "theorem three" in r["body"]["messages"][1]["content"]
        )
        == 3
    )  # one reply and two retries
    nli_bad = three["backtranslation@trans+trans"]
    assert nli_bad.verdict == "error" and "NLIVerdict" in nli_bad.evidence["reason"]
    # Lean: an unknown identifier is a compile failure
    assert four["compile@lean"].verdict == "fail"
    assert four["compile@lean"].evidence["status"] == "error"
    # the lints ran on every pair too
    assert three["lint.trivial_goal"].verdict == "pass"
    assert {k for k in one if k.startswith("lint.")} == set(LINTS)


def test_unregistered_judge_refused_before_any_call(tmp_path, store):
    inp = tmp_path / "pairs.jsonl"
    write(inp, PAIRS[:1])
    with FakeServer(script()) as srv:
        st = settings_for(tmp_path, srv.base_url)
        with pytest.raises(UnregisteredModel):
            asyncio.run(run_checks(st, store, inp, default_config(judges=["nobody"])))
        assert srv.requests == []


def test_bad_pairs_file_names_file_and_line(tmp_path, store):
    inp = tmp_path / "pairs.jsonl"
    inp.write_text(json.dumps(PAIRS[0]) + "\n{broken\n")
    with pytest.raises(InputError, match=r"pairs.jsonl:2"):
        asyncio.run(run_checks(Settings(), store, inp, default_config()))
    inp.write_text(json.dumps({"id": "x", "informal": "text"}) + "\n")
    with pytest.raises(InputError, match="no formal statement"):
        asyncio.run(run_checks(Settings(), store, inp, default_config()))
    inp.write_text("")
    with pytest.raises(InputError, match="empty"):
        asyncio.run(run_checks(Settings(), store, inp, default_config()))


def test_a_dead_judge_stops_the_pairs_instead_of_giving_each_an_error(tmp_path, store):
    # The first call that cannot connect is the pair's `error` (never a pass); once the
    # endpoint is down (DOWN_AFTER calls in a row) the battery lets EndpointDown out: the pairs
    # it met get no verdict at all and wait for a resume (issue 34 §5).
    from math2.checks import pair_key
    from tests.llm.dead import DOWN_AFTER, dead_settings, met_endpoint_down, run_until_down

    pairs = [
        {"id": f"p{i}", "informal": f"P{i}: $x$ is $x$.", "formal": f"theorem p{i} (x : ℕ) : x = x"}
        for i in range(8)
    ]
    inp = tmp_path / "pairs.jsonl"
    write(inp, pairs)
    st = dead_settings(settings_for(tmp_path, "http://unused/v1"))
    run_until_down(lambda: run_checks(st, store, inp, default_config(judges=["judge"])))
    met_endpoint_down(store, done_before=DOWN_AFTER - 1)
    with store.session() as s:
        rows = list(s.scalars(select(CheckResultRow)))
    keys = {pair_key(p["informal"], p["formal"]) for p in pairs}
    judged = {r.pair_key for r in rows}
    assert len(judged) == DOWN_AFTER - 1 and judged <= keys
    (verdict,) = [r for r in rows if r.check == "consistency"]
    assert verdict.verdict == "error" and "LLMError" in verdict.evidence["reason"]
