"""`@[to_additive]` twins from source text: Mathlib's name rule on real Mathlib names, the
attribute's forms, namespaces translated through known twins, and a scan of a fixture tree."""

from pathlib import Path

import pytest

from math2.importers.mathlib import read_checkout
from math2.importers.to_additive import (
    ToAdditive,
    guess_name,
    parse_attribute,
    split_attributes,
    split_case,
    translate_statement,
    twin_name,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "toadditive"


@pytest.mark.parametrize(
    ("mul", "add"),
    [  # pairs that exist in Mathlib at the manifest's pin
        ("prod_range_succ", "sum_range_succ"),
        ("mul_comm", "add_comm"),
        ("CommMonoid", "AddCommMonoid"),
        ("CancelCommMonoid", "AddCancelCommMonoid"),
        ("LeftCancelMonoid", "AddLeftCancelMonoid"),
        ("OrderedCommGroup", "OrderedAddCommGroup"),
        ("smul_comm", "vadd_comm"),
        ("inv_mul_cancel", "neg_add_cancel"),
        ("div_self", "sub_self"),
        ("isUnit_iff", "isAddUnit_iff"),
        ("mulSupport", "support"),
        ("mulIndicator_apply", "indicator_apply"),
        ("orderOf_dvd", "addOrderOf_dvd"),
        ("DivisionMonoid", "SubtractionMonoid"),
        ("zpow_natCast", "zsmul_natCast"),
        ("one_le_mul", "nonneg_add"),
        ("mul_le_one", "add_nonpos"),
        ("isSquare_iff", "even_iff"),
        ("LinearOrderedCommMonoidWithZero", "LinearOrderedAddCommMonoidWithZero"),
        ("eventuallyLE_one", "eventuallyLE_zero"),  # `LE_one` is not `le_one` → `nonpos`
        # each piece between primes on its own (`OneHom.map_one'` is `ZeroHom.map_zero'`)
        ("map_one'", "map_zero'"),
        ("mul_eq_one'", "add_eq_zero'"),
        ("mul_inv_cancel''", "add_neg_cancel''"),
    ],
)
def test_guess_name_gives_mathlibs_additive_names(mul: str, add: str) -> None:
    assert guess_name(mul) == add


def test_split_case_keeps_underscores_and_capital_words() -> None:
    assert split_case("InvHMulLE_ne_top") == ["Inv", "HMul", "LE", "_", "ne", "_", "top"]


def test_attribute_forms() -> None:
    assert parse_attribute("simp") is None
    a = parse_attribute("to_additive (attr := simp, norm_cast) /-- The sum,\n  of `f`. -/")
    assert a == ToAdditive(target=None, docstring="The sum, of `f`.")
    assert parse_attribute('to_additive "an additive [version]"').docstring == (
        "an additive [version]"
    )
    assert parse_attribute("to_additive (dont_translate := R) smul_eq").target == "smul_eq"
    assert parse_attribute("to_additive existing").existing
    assert parse_attribute("to_additive existing (attr := simp) foo").target == "foo"
    assert not parse_attribute("to_additive self").generates
    assert split_attributes('simp, to_additive "a, b", deprecated (since := "x, y")') == [
        "simp",
        'to_additive "a, b"',
        'deprecated (since := "x, y")',
    ]


def test_twin_names_translate_namespaces_only_through_known_twins() -> None:
    known = {"Subgroup": "AddSubgroup"}
    assert twin_name("Subgroup.mul_mem", ToAdditive(), known) == "AddSubgroup.add_mem"
    assert twin_name("Finset.prod_comm", ToAdditive(), known) == "Finset.sum_comm"
    assert twin_name("Subgroup.foo", ToAdditive(target="bar"), known) == "AddSubgroup.bar"
    assert twin_name("A.B.c", ToAdditive(target="_root_.d"), known) == "d"
    assert twin_name("pow_succ", ToAdditive(target="succ_nsmul"), known) == "succ_nsmul"
    assert twin_name("idf", ToAdditive(), known) is None  # the same name: Lean refuses it
    assert twin_name("mul_comm", ToAdditive(generates=False), known) is None


def test_statement_translation_is_textual() -> None:
    out = translate_statement(
        "[Monoid M] (a b : M) : a * b⁻¹ = (a / b)⁻¹ * 1 ∧ a ^ (n + 1) = ∏ i ∈ s, f i",
        {"Monoid": "AddMonoid"},
    )
    assert out == "[AddMonoid M] (a b : M) : a + -b = -(a - b) + 0 ∧ a ^ (n + 1) = ∑ i ∈ s, f i"


def test_scan_adds_the_twins_of_a_tree() -> None:
    data = read_checkout(FIX)
    rec = {r.name: r for r in data.records}
    assert data.counts["additive twins (@[to_additive])"] == 9
    assert rec["AddSubgroup.add_mem"].docstring == "An `AddSubgroup` is closed under addition."
    assert rec["AddSubgroup.add_mem"].statement == "{x y : G} : x ∈ H → y ∈ H → x + y ∈ H"
    assert rec["AddSubgroup.add_mem"].extra["to_additive_of"] == "Subgroup.mul_mem"
    assert rec["Finset.sum_range_succ"].statement.endswith("= (∑ x ∈ range n, f x) + f n")
    assert rec["Finset.sum_pair_neg"].docstring == "Gauss, in a string."
    assert rec["Finset.sum_pair_neg"].statement == "(a b : G) : -(a + b) = -b + -a"
    assert rec["Finset.sum_explicit"].statement == "[AddCommMonoid M] (a : M) : a + 0 = a"
    assert "Finset.sum_existing" not in rec
    assert "AddCommMonoid.add_comm'" in rec  # the namespace through the class's own twin
    assert rec["AddMonoid'"].statement == "(M : Type*) extends Add M, Zero M"  # a given name
    assert rec["AddMonoid'.add_zero"].statement == ": ∀ a : M, a + 0 = a"  # and its fields
    assert rec["AddCommMonoid"].docstring is None  # no docstring in the attribute
    assert "mul_self_twin" in rec and "add_self_twin" not in rec  # `self`
    # a declaration written in source is kept as written, not replaced by the twin
    assert rec["add_left_hand"].extra.get("to_additive_of") is None
    assert rec["add_left_hand"].docstring == "Written by hand: the twin is not generated over it."
    assert data.counts["named, unique"] == len(rec)
