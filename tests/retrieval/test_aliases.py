"""An alias is indexed with its target's statement (and docstring), never given it in the
corpus."""

from pathlib import Path

from sqlalchemy import select

from math2.retrieval.aids import NameIndex
from math2.retrieval.aliases import borrow, one_direction
from math2.retrieval.index import SearchIndex, build_index
from math2.store import Mention


def test_resolve_target_as_lean_reads_it() -> None:
    names = ["Left.mul_pos", "Nat.Prime.two_le", "Foo.bar", "Foo.Baz.bar", "Other.qux"]
    index = NameIndex(names)
    assert index.resolve("Left.mul_pos", scope="") == 0
    assert index.resolve("two_le", scope="Nat.Prime") == 1  # its namespace
    assert index.resolve("bar", scope="Foo.Baz") == 3  # innermost first
    assert index.resolve("_root_.Foo.bar", scope="") == 2
    assert index.resolve("qux", scope="") == 4  # the one name ending in `.qux`
    assert index.resolve("bar", scope="") is None  # two candidates: none chosen
    assert index.resolve("missing", scope="") is None


def test_borrow_keeps_own_text_and_hidden_docstrings() -> None:
    names = ["t", "a", "b", "c"]
    stmts = ["0 < x * y", None, None, "own"]
    docs = ["target's doc", None, "own doc", None]
    got, got_docs, n = borrow(names, stmts, docs, {1: ("t", None), 2: ("t", None), 3: ("t", None)})
    assert got == ["0 < x * y", "0 < x * y", "0 < x * y", "own"] and n == 3
    assert got_docs == ["target's doc", "target's doc", "own doc", "target's doc"]
    # a held-out (None) docstring is never borrowed, nor by an alias whose own is held out
    _, got_docs, _ = borrow(names, stmts, [None, None, None, None], {1: ("t", None)})
    assert got_docs == [None] * 4
    _, got_docs, _ = borrow(names, stmts, docs, {1: ("t", None)}, hidden={1})
    assert got_docs[1] is None


def test_the_directions_of_an_iff() -> None:
    names = ["dvd_iff", "Dvd.of_mod", "Dvd.to_mod", "not_iff"]
    stmts = ["{a b : ℕ} (h : 0 < a) : a ∣ b ↔ b % a = 0", None, None, "Injective f"]
    targets = {1: ("dvd_iff", "mpr"), 2: ("dvd_iff", "mp"), 3: ("not_iff", None)}
    got, _, n = borrow(names, stmts, [None] * 4, targets)
    assert got[1] == "{a b : ℕ} (h : 0 < a) : b % a = 0 → a ∣ b"
    assert got[2] == "{a b : ℕ} (h : 0 < a) : a ∣ b → b % a = 0"
    # a direction of a statement with no top-level iff gets nothing
    got, _, n = borrow(names, stmts, [None] * 4, {1: ("not_iff", "mp")})
    assert got[1] is None and n == 0
    assert one_direction("p ↔ (q ↔ r)", "mpr") == "(q ↔ r) → p"


def test_the_importer_records_each_direction(tmp_path: Path) -> None:
    from math2.importers.lean_source import scan_file

    (tmp_path / "M.lean").write_text(
        "theorem foo_iff : a ↔ b := sorry\nalias ⟨foo, bar⟩ := foo_iff\nalias ⟨_, baz⟩ := foo_iff\n"
    )
    decls = scan_file(tmp_path, tmp_path / "M.lean").declarations
    got = {d.name: (d.successor, d.alias_direction) for d in decls if d.kind == "alias"}
    assert got == {
        "foo": ("foo_iff", "mp"),
        "bar": ("foo_iff", "mpr"),
        "baz": ("foo_iff", "mpr"),
    }


def test_an_alias_is_found_by_its_targets_statement(store, tmp_path: Path) -> None:
    with store.session() as s:
        target = s.scalar(select(Mention).where(Mention.name == "Demo.two_eq"))
        alias = Mention(
            source_id=target.source_id, pin_id=target.pin_id, name="Demo.two_eq_alias",
            kind="alias", statement=None, docstring=None, licence=target.licence,
            intake_class=target.intake_class, authored=target.authored, module=target.module,
            extra={"successor": "two_eq"},
        )  # fmt: skip
        s.add(alias)
        s.commit()
    build_index(store, tmp_path / "v8", "mathlib")
    build_index(store, tmp_path / "v6", "mathlib", text_version=6)
    query = "(2 : ℕ) = 1 + 1"
    found = [h.name for h in SearchIndex(tmp_path / "v8").search(query, k=5)]
    assert "Demo.two_eq_alias" in found and "Demo.two_eq" in found, found
    ix = SearchIndex(tmp_path / "v8")
    assert "1 + 1" in ix.snippet(ix.names.index("Demo.two_eq_alias"))
    assert "Demo.two_eq_alias" not in [h.name for h in SearchIndex(tmp_path / "v6").search(query)]
    with store.session() as s:  # the corpus is unchanged: the alias still has no statement
        assert (
            s.scalar(select(Mention).where(Mention.name == "Demo.two_eq_alias")).statement is None
        )
