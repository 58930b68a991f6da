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
    assert [x.name for x in demo.declarations if x.generated] == ["Demo.instInhabitedNat"]
    assert d["Demo.Point.x"].kind == "field"


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
    assert [x.name for x in sf.declarations] == [
        "Top.Space.IsOpen",
        "Top.Space.IsOpen.trivial",
        "Top.Space.isOpen_univ",
    ]


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


SCAN = Path(__file__).resolve().parents[1] / "fixtures" / "leanscan"


@pytest.fixture(scope="module")
def scan():
    return by_name(scan_file(SCAN, SCAN / "Mathlib/Scan.lean"))


def test_universe_parameters_are_not_part_of_the_name(scan) -> None:
    assert scan["PMF"].statement == "(α : Type u) : Type u"
    assert scan["exists_pair"].kind == "lemma"
    assert not [n for n in scan if n.endswith(".") or "{" in n]


def test_instance_priority_keeps_the_name(scan) -> None:
    assert scan["Scan.IsAlgClosure.normal"].statement == ": Nonempty Nat"


def test_public_and_module_sections(scan) -> None:
    assert scan["Scan.generator_mem"].modifiers == ["public"]
    assert scan["Scan.generator_eq_zero"].kind == "lemma"
    # `@[expose] public section` is a section: the `end` of namespace Scan still closes Scan
    assert "after_end" in scan


def test_quotes_only_where_lean_prints_them(scan) -> None:
    assert "Scan.quoted" in scan and "Scan.«quoted»" not in scan
    assert "Scan.«term_+_»" in scan


def test_anonymous_instances_named_as_lean_does(scan) -> None:
    assert scan["Scan.instCommRingAlgebraicClosure"].generated
    # binder variables are left out; a binder nothing depends on gives `Of…` (Lean's rule)
    assert "Scan.instSMulAlgebraicClosureOfDistribSMul" in scan
    # ℕ is Nat; a second instance of the same name gets _1, as Lean numbers them
    assert scan["Scan.instInhabitedNat"].modifiers == ["noncomputable"]
    assert scan["Scan.instInhabitedNat_1"].line == 38
    assert not scan["Scan.IsAlgClosure.normal"].generated


def test_structure_and_class_fields_are_declarations(scan) -> None:
    carrier = scan["Scan.Lifts.carrier"]
    assert (carrier.kind, carrier.statement) == ("field", ": IntermediateField F E")
    assert carrier.docstring == "The domain of a lift."
    assert scan["Scan.Lifts.emb"].statement == ": carrier →ₐ[F] K"
    neg = scan["Scan.IsRealClosed.isSquare_or_isSquare_neg"]
    assert neg.statement == "(x : R) : IsSquare x ∨ IsSquare (-x)"
    assert scan["Scan.IsRealClosed.exists_isRoot_of_odd_natDegree"].statement.endswith(
        ": ∃ x, f.IsRoot x"
    )
    # `fst snd : α` is two fields; `mk' ::` names the constructor, not a field
    assert {"Scan.Pair.fst", "Scan.Pair.snd", "Scan.Pair.third"} <= set(scan)
    assert "Scan.Pair.mk'" not in scan and scan["Scan.Pair.third"].modifiers == ["protected"]


def test_instance_base_names() -> None:
    from math2.importers.lean_namegen import instance_base_name
    from math2.importers.lean_names import lean_name

    assert instance_base_name(": CommSemiring ℕ", ["Nat"]) == "instCommSemiring"
    assert instance_base_name(": FunLike (M →* N) M N", ["MonoidHom"]) == "instFunLike"
    assert instance_base_name(": Module R (Polynomial R)", []) == "instModulePolynomial"
    assert instance_base_name("[Fintype α] : Fintype (Option α)", []) == "instFintypeOption"
    assert lean_name("Foo.«bar».«end»") == "Foo.bar.«end»"


def test_end_closes_only_the_parts_it_names(scan) -> None:
    assert "NumberField.Units.dirichletUnitTheorem.inner_step" in scan
    assert "NumberField.Units.basisModTorsion" in scan


def test_mutual_blocks_do_not_close_a_namespace(tmp_path: Path) -> None:
    f = tmp_path / "M.lean"
    f.write_text(
        "namespace A\nmutual\ntheorem x : True := trivial\nend\ntheorem z : True := trivial\n"
    )
    assert [d.name for d in scan_file(tmp_path, f).declarations] == ["A.x", "A.z"]


def test_a_named_constructor_and_bracketed_binders_keep_every_field(scan) -> None:
    # `ofRepr ::` on its own line, the fields indented under it (Mathlib's `Module.Basis`)
    repr = scan["Scan.Basis.repr"]
    assert (repr.kind, repr.statement) == ("field", ": M ≃ₗ[R] ι →₀ R")
    assert repr.docstring == "The coordinates of a vector."
    assert "Scan.Basis.ofRepr" not in scan
    assert scan["Scan.Basis"].body == ["repr : M ≃ₗ[R] ι →₀ R"]
    # `where mk' ::` on the structure's line (Mathlib's `CategoryTheory.Equivalence`)
    assert scan["Scan.Equivalence.functor"].docstring == "The functor one way."
    assert scan["Scan.Equivalence.inverse"].statement == ": D ⥤ C"
    # fields written as `[name : T]`, `{name : T}` and `(a b : T)`
    assert scan["Scan.Bundled.inst"].statement == ": Mul α"
    assert scan["Scan.Bundled.carrier"].statement == ": Set α"
    assert {"Scan.Bundled.one", "Scan.Bundled.two"} <= set(scan)


def test_fields_with_binders_modifiers_and_parents_defaults(scan) -> None:
    """`(h (r : ℝ) : T)` and `[inst (a : A) : T]` are fields with binders of their own;
    `protected [nonempty : T]` is the field `nonempty`, not `protected`; in a structure that
    `extends` another, `lt := …` and `compare a b := …` give a parent's fields defaults and
    declare nothing, where `verbose := false` in one that extends none is a field (and
    `render x := …` the field `render`: `x` is its binder)."""
    assert scan["Scan.FEPair.hf_top"].statement == "(r : ℝ) : r = r"
    assert scan["Scan.FEPair.space_of"].statement == "(a : ℕ) : Nonempty (Fin a)"
    nonempty = scan["Scan.Linked.nonempty"]
    assert (nonempty.statement, nonempty.modifiers) == (": Nonempty V", ["protected"])
    assert "Scan.Linked.protected" not in scan and "Scan.Linked.linked" in scan
    ordered = {n for n in scan if n.startswith("Scan.Ordered.")}
    assert ordered == {"Scan.Ordered.le_refl'"}
    options = {n for n in scan if n.startswith("Scan.Options.")}
    assert options == {"Scan.Options.verbose", "Scan.Options.render", "Scan.Options.depth"}
    assert scan["Scan.Ordered"].body == ["le_refl' : ∀ a : α, a ≤ a"]
