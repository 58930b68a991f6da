"""Rocq names users write (issue 43 §2), on a library laid out like the stdlib and written for
math2 (`fixtures/systems/rocq-modules`): a module that `Include`s a functor gets its lemmas under
its own name, through includes of includes and `Module Type X := A <+ B`; functor bodies are
marked; a Prop-valued or untyped definition's statement is its body; search for the usable name
finds `Nat.add_comm` first."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.registry import load_builtin_importers
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention, Source
from tests.build_helpers import pinned_manifest
from tests.conftest import FIXTURES

ROOT = FIXTURES / "systems" / "rocq-modules"
NZ = "Stdlib.Numbers.NatInt.NZAdd.NZAddProp"


@pytest.fixture
def rows(sqlite_store, tmp_path: Path) -> dict[str, Mention]:
    manifest = load_manifest(pinned_manifest(tmp_path, {"rocq-stdlib": "fixture0"}))
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    spec = load_builtin_importers()["rocq-stdlib"]
    spec.run(sqlite_store, manifest.get("rocq-stdlib"), ROOT)
    with sqlite_store.session() as s:
        sid = s.scalar(select(Source.id).where(Source.name == "rocq-stdlib"))
        got = s.scalars(select(Mention).where(Mention.source_id == sid)).all()
        s.expunge_all()
    return {m.name: m for m in got}


def test_included_lemmas_under_the_modules_own_name(rows) -> None:
    for module in ("Arith.PeanoNat.Nat", "NArith.BinNat.N", "ZArith.BinInt.Z"):
        m = rows[f"Stdlib.{module}.add_comm"]
        assert m.extra["included_from"] == f"{NZ}.add_comm" and m.kind == "theorem"
        assert m.statement == ": forall n m, n + m == m + n"
        assert "functor_body" not in m.extra
        # a module nested in the functor comes along, under the including module
        assert rows[f"Stdlib.{module}.Private_Shuffle.add_shuffle"].extra["included_from"]
    nat = "Stdlib.Arith.PeanoNat.Nat"
    # through `Include NBasicProp` := `NBaseProp N <+ NOrderFacts N`, and NBaseProp's include
    assert rows[f"{nat}.le_0_l"].extra["included_from"].endswith("NBase.NBaseProp.le_0_l")
    assert rows[f"{nat}.lt_irrefl"].extra["included_from"].endswith("NOrderFacts.lt_irrefl")
    assert rows[f"{nat}.add_comm"].extra["line"] == 17  # the line of the Include
    assert "Stdlib.ZArith.BinInt.Z.le_0_l" not in rows  # Z includes NZAddProp only
    # aliases copy nothing: `Module NatAlias := Nat.`, `Module NBaseAlias := NBaseProp.`
    assert not [n for n in rows if "NatAlias" in n or "NBaseAlias" in n]


def test_functor_bodies_are_marked(rows) -> None:
    assert rows[f"{NZ}.add_comm"].extra["functor_body"] is True  # a functor type
    assert rows["Stdlib.Numbers.Natural.NBase.NBaseProp.le_0_l"].extra["functor_body"] is True
    assert rows[f"{NZ}.Private_Shuffle.add_shuffle"].extra["functor_body"] is True
    assert "functor_body" not in rows["Stdlib.Arith.PeanoNat.Nat.double"].extra


def test_definition_statements(rows) -> None:
    nat = "Stdlib.Arith.PeanoNat.Nat"
    assert rows[f"{nat}.double"].statement == "(n : nat) : nat"  # a type: no body
    assert rows[f"{nat}.divide"].statement == "(x y : nat) : Prop := exists z, y = z * x"
    assert rows[f"{nat}.Even"].statement == "n := exists m, n = 2 * m"  # no type written
    assert rows[f"{nat}.double_comm_stt"].statement is None  # an untyped `fun` proof term


def _search(store, folder: Path) -> list[str]:
    from math2.retrieval.index import SearchIndex, build_index

    build_index(store, folder, "rocq-stdlib", dense=False)
    hits = SearchIndex(folder).search("addition is commutative on natural numbers", k=5)
    return [h.name for h in hits]


def test_search_finds_the_name_users_write(rows, sqlite_store, tmp_path: Path) -> None:
    names = _search(sqlite_store, tmp_path / "index")
    assert "Stdlib.Arith.PeanoNat.Nat.add_comm" in names[:2], names


def test_search_ranks_the_name_users_write_first(rows, sqlite_store, tmp_path: Path) -> None:
    names = _search(sqlite_store, tmp_path / "index")
    assert names[0] == "Stdlib.Arith.PeanoNat.Nat.add_comm", names


def test_functor_bodies_with_a_usable_copy_are_left_out(rows, sqlite_store, tmp_path) -> None:
    from math2.retrieval.index import SearchIndex, build_index

    copied = {m.extra.get("included_from") for m in rows.values()} - {None}
    bodies = {n for n, m in rows.items() if m.extra.get("functor_body")}
    meta = build_index(sqlite_store, tmp_path / "default", "rocq-stdlib", dense=False)
    names = set(SearchIndex(tmp_path / "default").names)
    assert meta["functor_bodies_left_out"] == len(bodies & copied) > 0
    assert not names & bodies & copied
    build_index(sqlite_store, tmp_path / "all", "rocq-stdlib", dense=False, functor_bodies=True)
    assert bodies <= set(SearchIndex(tmp_path / "all").names)


def test_a_body_no_module_includes_is_kept() -> None:
    from math2.retrieval.corpus import Row, _without_copied_bodies

    def row(i: int, name: str, **extra: object) -> Row:
        return Row(i, name, ": True", None, "M", "theorem", dict(extra))

    rows = [
        row(1, "F.a", functor_body=True), row(2, "F.b", functor_body=True),
        row(3, "M.a", included_from="F.a"), row(4, "G.c"),
    ]  # fmt: skip
    kept, left_out = _without_copied_bodies(rows)
    assert [r.name for r in kept] == ["F.b", "M.a", "G.c"] and left_out == 1


def test_the_cli_says_what_it_left_out_and_keeps_it_when_asked(rows, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from math2.cli import app

    monkeypatch.setenv("MATH2_DB_URL", f"sqlite:///{tmp_path / 'math2.db'}")  # `sqlite_store`
    monkeypatch.setenv("MATH2_RETRIEVAL__INDEX_DIR", str(tmp_path / "ix"))
    build = ["index", "build", "--library", "rocq-stdlib", "--no-dense"]
    res = CliRunner().invoke(app, build)
    assert res.exit_code == 0, res.output
    assert re.search(
        r"; [1-9]\d* functor-body declarations left out .*--functor-bodies",
        " ".join(res.stdout.split()),
    )
    first = CliRunner().invoke(app, ["search", "addition is commutative on natural numbers",
                                     "--library", "rocq-stdlib", "--json"])  # fmt: skip
    assert json.loads(first.stdout)[0]["name"] == "Stdlib.Arith.PeanoNat.Nat.add_comm"
    res = CliRunner().invoke(app, [*build, "--functor-bodies"])
    assert res.exit_code == 0 and "left out" not in res.stdout, res.output
    assert f"{NZ}.add_comm" in json.loads(
        (tmp_path / "ix" / "rocq-stdlib" / "names.json").read_text()
    )
