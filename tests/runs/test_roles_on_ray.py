"""`informalize`, `check` and `eval run` on a Ray cluster the test starts itself
(`ray.init(num_cpus=2)`), with the fake model server and the fake REPL: the same run items and
attempts as the local executor, the steps' services built by the same factory
(`math2.services`) in the workers. And the CLI takes `--executor ray [--address …]` for each.

Normalised before comparing (and nothing else): database ids and times (as in test_ray.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from math2.checks import default_config, run_checks
from math2.cli import app
from math2.config import LeanSettings, LLMSettings, Settings
from math2.eval import load_harness_jsonl, version_from_items
from math2.eval.harness import EvalOptions, run_eval
from math2.llm import add_model
from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.informalize import InformalizeOptions, run_informalize
from math2.runs.ray_exec import RayOptions
from math2.store import Store
from math2.store.work import AgentText
from tests.runs.ray_cluster import _rows as ray_rows
from tests.runs.ray_cluster import cluster, lean_actors, pg  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.ray, pytest.mark.postgres]

WRITE = "You write the natural-language statement"
MODELS = ["writer", "trans", "gen", "j1"]


def _settings(tmp_path: Path, base_url: str) -> Settings:
    return Settings(
        db_url=f"sqlite:///{tmp_path / 'unused.db'}",
        llm=LLMSettings(base_url=base_url, concurrency=4),
        lean=LeanSettings(
            project_dir=tmp_path,
            repl_command=[sys.executable, "-m", "math2.lean.testing.fake_repl"],
            workers=2,
            timeout_s=30,
        ),
    )


def _registered(store: Store) -> Store:
    with store.session() as s:
        for m in MODELS:
            add_model(s, m)
    return store


def _script() -> Script:
    return Script(
        models=MODELS,
        rules=[
            Rule(system=WRITE, user=r"Declaration: (Chain\.D\d+) ", reply=r"TEXT[\1] on $n$.",
                 expand=True),
            Rule(system="translate Lean 4", reply="Back: a property of the natural number $n$."),
            Rule(system="compare two", json={"equivalent": True, "differences": []}),
            Rule(model="^gen$", user=r"PROBLEM(\d+)",
                 reply=r"```lean\ntheorem p\1 : \1 + 0 = \1 := by sorry\n```", expand=True),
            Rule(model="^j1$", user="theorem p2", json={"consistent": False, "defects": [
                {"kind": "changed_condition", "clause": "2 + 0"}]}),
            Rule(model="^j1$", json={"consistent": True, "defects": []}),
        ],
    )  # fmt: skip


_TIMES = {"latency_s", "time_s", "duration_s"}


def _dropped(key: str) -> bool:
    """Database ids (`id`, `…_id`, `…_ids`) and times."""
    return key == "id" or key.endswith(("_id", "_ids")) or key in _TIMES


def _norm(v):
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items() if not _dropped(k)}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _rows(store: Store) -> tuple[list[str], list[str]]:
    """test_ray's (run items, attempts) with the ids inside results and requests left out too."""
    items, attempts = ray_rows(store)
    return (
        sorted(json.dumps(_norm(json.loads(x))) for x in items),
        sorted(json.dumps(_norm(json.loads(x)), sort_keys=True) for x in attempts),
    )


def _chain(folder: Path, n: int = 7) -> Path:
    """A chain of declarations, each using the one before (dependencies across batches)."""
    lines = ["namespace Chain", "def D0 (n : ℕ) : Prop := n = 0"]
    lines += [f"def D{k} (n : ℕ) (h : D{k - 1} n) : Prop := True" for k in range(1, n)]
    (folder / "Mathlib").mkdir(parents=True)
    (folder / "Mathlib" / "Chain.lean").write_text("\n\n".join([*lines, "end Chain"]) + "\n")
    return folder


async def test_informalize_on_ray_as_local(cluster, pg, tmp_path):  # noqa: F811
    folder = _chain(tmp_path / "src")
    options = InformalizeOptions(model="writer", translator="trans", lean_dir=str(folder))
    local, remote = _registered(pg()), _registered(pg())
    with FakeServer(_script()) as s1, FakeServer(_script()) as s2:
        a = await run_informalize(_settings(tmp_path, s1.base_url), local, options)
        b = await run_informalize(
            _settings(tmp_path, s2.base_url), remote, options, ray=RayOptions(batch_size=2)
        )
        prompts = [r for r in s2.requests if WRITE in json.dumps(r)]
    assert (a.done, a.failed) == (b.done, b.failed) == (7, 0)
    assert _rows(local) == _rows(remote)
    texts = {}
    for store in (local, remote):
        with store.session() as s:
            rows = s.scalars(select(AgentText).where(AgentText.kind == "informal_statement"))
            texts[store.url] = sorted((t.item, t.body, t.extra["accepted"]) for t in rows)
    assert texts[local.url] == texts[remote.url] and len(texts[local.url]) == 7
    # on Ray too, each declaration's prompt holds the text of the one it uses (written by
    # another worker): the board reads the run's items in the store
    for k in range(1, 7):
        asked = [json.dumps(r) for r in prompts if f"Declaration: Chain.D{k} " in json.dumps(r)]
        assert asked and all(f"TEXT[Chain.D{k - 1}]" in p for p in asked), k


def _pairs(path: Path) -> Path:
    lines = [
        {"id": f"q{k}", "informal": f"{k} plus zero is {k}.", "formal": f"theorem p{k} : {k} + 0 "
         f"= {k} := by sorry"}
        for k in range(1, 6)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


async def test_check_on_ray_as_local(cluster, lean_actors, pg, tmp_path):  # noqa: F811
    pairs = _pairs(tmp_path / "pairs.jsonl")
    config = default_config(judges=["j1"], translator="trans", compile=True)
    local, remote = _registered(pg()), _registered(pg())
    with FakeServer(_script()) as s1, FakeServer(_script()) as s2:
        a = await run_checks(_settings(tmp_path, s1.base_url), local, pairs, config)
        b = await run_checks(
            _settings(tmp_path, s2.base_url), remote, pairs, config, ray=RayOptions(batch_size=2)
        )
    assert (a.done, a.failed) == (b.done, b.failed) == (5, 0)
    items, attempts = _rows(local)
    assert (items, attempts) == _rows(remote)
    assert any('"fail"' in i for i in items) and any('"pass"' in i for i in items)
    assert any('"compile"' in x or "compile" in x for x in attempts)


async def test_eval_on_ray_as_local(cluster, lean_actors, pg, tmp_path):  # noqa: F811
    harness = tmp_path / "bench.jsonl"
    harness.write_text(
        "".join(
            json.dumps({"name": f"i{k}", "problem": f"PROBLEM{k}", "ground_truth": "x"}) + "\n"
            for k in range(1, 6)
        )
    )
    versions = [
        version_from_items(n, "harness:t", v) for n, v in load_harness_jsonl(harness).items()
    ]
    # k = 1: two samples of one item would be the same code, and which of them the Lean result
    # cache answers depends on timing (on either executor)
    options = EvalOptions(model="gen", judges=["j1"], k=1)
    local, remote = _registered(pg()), _registered(pg())
    with FakeServer(_script()) as s1, FakeServer(_script()) as s2:
        a, sa = await run_eval(_settings(tmp_path, s1.base_url), local, versions, options)
        b, sb = await run_eval(
            _settings(tmp_path, s2.base_url), remote, versions, options,
            ray=RayOptions(batch_size=2),
        )  # fmt: skip
    assert (a.done, a.failed) == (b.done, b.failed) == (5, 0)
    assert _rows(local) == _rows(remote)
    key = lambda r: (r.item, r.sample)  # noqa: E731
    assert [_norm(r.model_dump()) for r in sorted(sa, key=key)] == [
        _norm(r.model_dump()) for r in sorted(sb, key=key)
    ]
    assert {r.item: r.judges["j1"] for r in sa} == {f"i{k}": k != 2 for k in range(1, 6)}
    assert all(r.compiled and r.compiled_by for r in sa)


@pytest.mark.parametrize(
    "argv",
    [
        ["informalize", "--model", "writer", "--translator", "trans"],
        ["check", "PAIRS", "--judge", "j1"],
        ["eval", "run", "--model", "gen", "--judge", "j1", "--harness", "HARNESS"],
    ],
)
def test_cli_takes_the_executor_and_refuses_ray_on_sqlite(tmp_path, argv):
    pairs = _pairs(tmp_path / "pairs.jsonl")
    harness = tmp_path / "bench.jsonl"
    harness.write_text(json.dumps({"name": "i1", "problem": "P", "ground_truth": "x"}) + "\n")
    files = {"PAIRS": pairs.as_posix(), "HARNESS": harness.as_posix()}
    argv = [files.get(a, a) for a in argv]
    db = f"sqlite:///{tmp_path / 'm.db'}"
    assert CliRunner().invoke(app, ["--db", db, "init"]).exit_code == 0
    r = CliRunner().invoke(app, ["--db", db, *argv, "--executor", "ray"])
    assert r.exit_code == 2, r.output
    assert "needs a PostgreSQL store" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["--db", db, *argv, "--address", "auto"])
    assert r.exit_code == 2 and "--address is only for --executor ray" in r.output, r.output
