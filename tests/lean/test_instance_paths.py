"""Issue 41 §2, §3 (review): every way a block makes an instance — `attribute [instance]`,
`[local instance]`, `[scoped instance]`, an instance of a reducible alias of a class — is
refused in a model's block and flagged in a person's context, the flag naming the class the
alias unfolds to and the type it is on."""

from __future__ import annotations

import pytest

from math2.lean.hygiene import check_code
from math2.lean.trust import ContextTrust
from tests.lean.library_fixture import LIBRARY

H = "import Mathlib\n"
T = "theorem foo : (3 : ℕ) < 2 := by sorry"
WRONG = "⟨fun _ _ => True⟩"
ATTRIBUTES = {
    "instance": f"def myLT : LT ℕ := {WRONG}\nattribute [instance] myLT\n{T}",
    "local instance": f"def myLT : LT ℕ := {WRONG}\nattribute [local instance] myLT\n{T}",
    "scoped instance": f"namespace Foo\ndef myLT : LT ℕ := {WRONG}\n"
    f"attribute [scoped instance] myLT\nend Foo\nopen Foo\n{T}",
}
ALIASES = {
    "abbrev": f"abbrev MyLT := LT ℕ\ninstance : MyLT := {WRONG}\n{T}",
    "reducible def": f"@[reducible] def MyLT := LT ℕ\ninstance : MyLT := {WRONG}\n{T}",
    "attribute through an alias": f"abbrev MyLT := LT ℕ\ndef myLT : MyLT := {WRONG}\n"
    f"attribute [instance] myLT\n{T}",
}


def _check(code: str, trust: ContextTrust):
    return check_code(H + code, name="foo", known_name=LIBRARY, trust=trust)


@pytest.mark.parametrize("word", list(ATTRIBUTES))
def test_an_instance_attribute_is_refused_for_a_model_and_flagged_with_its_scope(word) -> None:
    gen = _check(ATTRIBUTES[word], ContextTrust.GENERATED)
    assert not gen.ok and {v.rule for v in gen.violations} == {"generated"}
    bench = _check(ATTRIBUTES[word], ContextTrust.BENCHMARK)
    assert bench.ok, [v.detail for v in bench.violations]
    flags = [f.detail for f in bench.flags if f.rule == "core instance"]
    assert any(f"`attribute [{word}]`" in f and "on ℕ" in f for f in flags), bench.flags


@pytest.mark.parametrize("case", list(ALIASES))
def test_an_instance_of_a_class_alias_is_read_through_the_alias(case) -> None:
    assert not _check(ALIASES[case], ContextTrust.GENERATED).ok
    bench = _check(ALIASES[case], ContextTrust.BENCHMARK)
    assert bench.ok, [v.detail for v in bench.violations]
    flags = [f.detail for f in bench.flags if f.rule == "core instance"]
    assert len(flags) == 1 and "on ℕ" in flags[0], bench.flags
    if case != "attribute through an alias":
        assert "an instance of `LT` on `ℕ`" in flags[0]  # the class, not the alias's name
    assert not [f for f in bench.flags if "no argument" in f.detail]


def test_a_class_binder_on_a_library_type_under_exists_is_flagged_for_a_person() -> None:
    """In a person's context the statement's variables are not known beforehand: a one-word
    argument counts as one unless the library's tables know it (`Cardinal` here, no hand list)."""
    code = "theorem foo : ∃ _ : LT Cardinal, True := by sorry"
    bench = _check(code, ContextTrust.BENCHMARK)
    assert bench.ok and any("LT Cardinal" in f.detail for f in bench.flags), bench.flags
    assert not _check(code, ContextTrust.GENERATED).ok
    bound = "theorem foo {C : Type} : ∃ _ : LT C, True := by sorry"  # over a variable: no flag
    assert not [f for f in _check(bound, ContextTrust.BENCHMARK).flags if f.rule == "instance"]
