"""The Lean source scanner on our own fixture project, and bad files."""

from pathlib import Path

import pytest

from math2.errors import InputError
from math2.importers.lean_source import blank, scan_file

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


@pytest.fixture(scope="module")
def demo():
    return scan_file(ROOT, ROOT / "Mathlib/Algebra/Demo.lean")


def by_name(sf):
    return {d.name: d for d in sf.declarations if d.name}


def test_names_kinds_and_namespaces(demo) -> None:
    assert demo.module == "Mathlib.Algebra.Demo"
    d = by_name(demo)
    assert d["Demo.add_comm'"].kind == "theorem"
    assert d["Demo.two_eq"].kind == "lemma"
    assert d["Demo.idf"].kind == "def" and d["Demo.Point"].kind == "structure"
    assert "root_level" in d  # _root_ escapes the namespace
    assert d["Demo.instDemo"].kind == "instance"
    assert "Demo.«weird name»" in d
    # nothing from comments, doc comments or strings
    assert not {"fake", "not_real", "not_real_either", "inside_a_string"} & {
        n.rsplit(".", 1)[-1] for n in d
    }
    anonymous = [x for x in demo.declarations if x.name is None]
    assert [x.kind for x in anonymous] == ["instance"]


def test_statements_stop_at_the_top_level(demo) -> None:
    d = by_name(demo)
    assert d["Demo.add_comm'"].statement == "(a b : ℕ) : a + b = b + a"
    assert d["Demo.pattern"].statement == ": ∀ n : ℕ, n + 0 = n"
    assert d["Demo.uses_char"].statement == ": 'a' ≠ 'b'"
    assert d["Demo.Point"].statement == ""


def test_docstrings_attributes_modifiers(demo) -> None:
    d = by_name(demo)
    assert d["Demo.add_comm'"].docstring.startswith("A doc comment with")
    assert d["Demo.two_eq"].docstring is None  # plain comments are not docstrings
    assert d["Demo.idf"].attributes == ['simp, to_additive "an additive version"']
    assert d["Demo.idf_apply"].modifiers == ["protected"]
    assert d["Demo.idf_apply"].stacks == ["09HY"]


def test_deprecations_and_aliases(demo) -> None:
    d = by_name(demo)
    old = d["Demo.add_comm_old"]
    assert (old.successor, old.deprecated_since) == ("add_comm'", "2026-01-01")
    alias = d["Demo.two_eq_old"]
    assert (alias.kind, alias.successor, alias.deprecated_since) == (
        "alias",
        "two_eq",
        "2026-02-02",
    )
    assert d["Demo.demo_mp"].successor == "Iff.rfl"


def test_main_results_from_module_docs(demo) -> None:
    assert demo.main_results == ["Demo.add_comm'"]


def test_nested_namespaces() -> None:
    sf = scan_file(ROOT, ROOT / "Mathlib/Topology/Other.lean")
    assert [x.name for x in sf.declarations] == ["Top.Space.IsOpen", "Top.Space.isOpen_univ"]


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        (b"theorem a : True := trivial\n/- open\n\n", 2, "unterminated comment"),
        (b'def s := "open\n\n', 1, "unterminated string"),
        (b"theorem a : True := trivial\n-- caf\xe9\n", 2, "invalid UTF-8"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, content: bytes, line: int, reason: str):
    f = tmp_path / "Bad.lean"
    f.write_bytes(content)
    with pytest.raises(InputError) as info:
        scan_file(tmp_path, f)
    assert (info.value.path, info.value.line) == (str(f), line)
    assert reason in info.value.reason


def test_blank_keeps_offsets_and_lines() -> None:
    text = 'a /- x\ny -/ b "s\\"t" c -- d\ne'
    code, docs = blank(text, "x")
    assert len(code) == len(text) and code.count("\n") == text.count("\n")
    assert code.split() == ["a", "b", "c", "e"] and docs == []
