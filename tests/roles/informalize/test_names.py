"""`math2 informalize --names FILE` and `--from-devset`: the user chooses which declarations of
the store's library are written (issue 45 §4's measurement needs the dev sets' targets), each
read as a run over the whole library reads it; a name that is no declaration of it is a clear
error naming the file and the line."""

from __future__ import annotations

import re

import pytest

from math2.llm.testing import FakeServer, Rule, Script
from math2.roles.informalize.job import InformalizeOptions, load_decls
from math2.roles.informalize.sources import decls_from_store
from math2.store import Store
from tests.roles.informalize.test_select import _seed

WRITE = "You write the natural-language statement"
BACK = "translate Lean 4 theorem statements"
NLI = "compare two mathematical statements"


def script() -> Script:
    rules = [
        Rule(system=WRITE, user=r"Declaration: B\.y ", reply="TEXT-OF-BY: n equals w."),
        Rule(system=WRITE, reply="Some statement."),
        Rule(system=BACK, reply="BACK-OK: the same."),
        Rule(system=NLI, json={"equivalent": True, "differences": []}),
    ]
    return Script(models=["writer", "trans"], rules=rules)


def _written(requests) -> list[str]:
    """The declarations whose statement was asked for, in the order asked."""
    out = []
    for r in requests:
        if WRITE in r["body"]["messages"][0]["content"]:
            user = r["body"]["messages"][-1]["content"]
            out.append(re.search(r"Declaration: (\S+)", user).group(1))
    return out


def _prompt(requests, name: str) -> str:
    for r in requests:
        user = r["body"]["messages"][-1]["content"]
        if WRITE in r["body"]["messages"][0]["content"] and f"Declaration: {name} " in user:
            return user
    raise AssertionError(f"no prompt for {name}")


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """`math2 …` on a store holding the toy library of test_select, with the fake model."""
    from tests.settings import cli_env

    srv = FakeServer(script())
    srv.__enter__()
    runner = cli_env(tmp_path, monkeypatch, srv.base_url, models=("writer", "trans"))
    store = Store(f"sqlite:///{tmp_path / 'cli.db'}")
    _seed(store)
    store.close()
    yield runner, srv
    srv.__exit__(None, None, None)


def _run(runner, *extra: str):
    from math2.cli import app

    args = ["informalize", "--model", "writer", "--translator", "trans", "--library", "toylib"]
    return runner.invoke(app, [*args, *extra])


def test_names_file_writes_those_declarations_in_dependency_order(cli, tmp_path):
    runner, srv = cli
    names = tmp_path / "names.txt"
    names.write_text("# the dev set's targets\nA.x\n\nB.y   # used by A.x\nA.x\n", encoding="utf-8")
    res = _run(runner, "--names", str(names))
    assert res.exit_code == 0, res.output
    assert "2 written this time (2 accepted" in res.stdout
    # only the named ones, each once, B.y first: A.x uses it, and its prompt carries B.y's text
    assert _written(srv.requests) == ["B.y", "A.x"]
    assert "TEXT-OF-BY" in _prompt(srv.requests, "A.x")


def test_named_declarations_read_as_in_a_run_over_the_whole_library(sqlite_store):
    _seed(sqlite_store)
    opts = InformalizeOptions(model="m", translator="m", library="toylib", names=["C.w", "A.u"])
    decls = load_decls(sqlite_store, opts)
    assert [d.id for d in decls] == ["A.u", "C.w"]  # neither uses the other: the store's order
    with sqlite_store.session() as s:
        full = {d.id: d for d in decls_from_store(s, "toylib")}
    for d in decls:  # its module's context and the library's deps, not the selection's
        assert d.context == full[d.id].context and d.deps == full[d.id].deps
    assert decls[0].deps == ["A.x"]  # a dep outside the selection is kept (no text for it)


def test_unknown_name_is_an_error_naming_file_and_line(cli, tmp_path):
    runner, srv = cli
    names = tmp_path / "names.txt"
    names.write_text("A.x\n\nNo.such\nB.y\nAlso.missing\n", encoding="utf-8")
    res = _run(runner, "--names", str(names))
    assert res.exit_code != 0
    assert res.exception is None or isinstance(res.exception, SystemExit)  # no traceback
    flat = " ".join(res.output.split())
    assert f"{names}:3" in flat and "No.such" in flat and "1 more" in flat, res.output
    assert "Traceback" not in res.output
    assert _written(srv.requests) == []  # nothing written when one name is wrong


@pytest.mark.parametrize(
    ("text", "why"),
    [("A.x\nA.x B.y\n", ":2"), ("# only a comment\n\n", "no names")],
)
def test_malformed_names_file_is_an_error(cli, tmp_path, text, why):
    runner, srv = cli
    names = tmp_path / "names.txt"
    names.write_text(text, encoding="utf-8")
    res = _run(runner, "--names", str(names))
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert why in " ".join(res.output.split()), res.output
    assert _written(srv.requests) == []


def test_from_devset_writes_the_answers_the_library_holds(cli, tmp_path, monkeypatch):
    runner, srv = cli
    sets = tmp_path / "devsets"
    sets.mkdir()
    (sets / "toy.yaml").write_text(
        "- q: a question\n  a: [B.y, Not.here]\n- q: another\n  a: [C.w]\n", encoding="utf-8"
    )
    monkeypatch.setattr("math2.retrieval.devsets.devsets_dir", lambda: sets)
    res = _run(runner, "--from-devset")
    assert res.exit_code == 0, res.output
    assert sorted(_written(srv.requests)) == ["B.y", "C.w"]
    flat = " ".join(res.output.split())
    assert "2 dev-set answers to informalize; 1 are no declaration" in flat, res.output


def test_names_with_another_source_is_refused(cli, tmp_path):
    runner, _srv = cli
    names = tmp_path / "names.txt"
    names.write_text("A.x\n", encoding="utf-8")
    res = _run(runner, "--names", str(names), "--lean-dir", str(tmp_path))
    assert res.exit_code != 0 and "not several" in res.output


def test_a_names_file_with_a_byte_order_mark_reads_its_first_name(tmp_path):
    from math2.cli.informalize import read_names

    f = tmp_path / "names.txt"
    f.write_bytes("\ufeffA.x\nB.y\n".encode())
    assert read_names(f) == [(1, "A.x"), (2, "B.y")]
