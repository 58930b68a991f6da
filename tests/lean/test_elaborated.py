"""Issue 41 §1: the verdict on the elaborated statement. Lean's answer to math2's own commands
(`#check @NAME` under `pp.all`/`pp.instanceTypes`, and the instance table of the type) is read
with the one lexer: every instance argument is an instance binder's variable, an application of
a global instance or a projection of those; `sorry` never stands in a type; a constant of a
model's block other than the target never occurs in its type; an answer math2 cannot read is
"not verified". The printed forms below follow Lean's printing rules under those options
(every application `@f …` in full, universes `.{u}`, instance arguments `(t : C …)`)."""

from __future__ import annotations

import socket

import pytest

from math2.lean.elab_terms import Unreadable, read, read_signature
from math2.lean.elaborated import Answer, commands_for, instances_answer, judge
from math2.lean.trust import ContextTrust
from tests.data_conformance import real_data

GEN, BENCH = ContextTrust.GENERATED, ContextTrust.BENCHMARK
NAT = "(instOfNatNat {n} : OfNat.{{0}} Nat {n})"


def num(n: int) -> str:
    return f"(@OfNat.ofNat.{{0}} Nat {n} {NAT.format(n=n)})"


def lt(inst: str, a: str, b: str) -> str:
    return f"@LT.lt.{{0}} Nat ({inst} : LT.{{0}} Nat) {a} {b}"


CORE = {"instOfNatNat", "instLTNat", "instHAdd", "instAddNat"}
# `g * h = h * g` over `[Group G]`: the multiplication's instance reached through the class's
# parents, the binder's variable at the bottom.
_MUL = (
    "(@instHMul.{u_1} G (@MulOneClass.toMul.{u_1} G (@Monoid.toMulOneClass.{u_1} G "
    "(@DivInvMonoid.toMonoid.{u_1} G (@Group.toDivInvMonoid.{u_1} G (inst : Group.{u_1} G) "
    ": DivInvMonoid.{u_1} G) : Monoid.{u_1} G) : MulOneClass.{u_1} G) : Mul.{u_1} G) "
    ": HMul.{u_1, u_1, u_1} G G G)"
)
GROUP = (
    "@foo.{u_1} : ∀ {G : Type u_1} [inst : Group.{u_1} G] (g h : G), @Eq.{u_1 + 1} G "
    f"(@HMul.hMul.{{u_1, u_1, u_1}} G G G {_MUL} g h) "
    f"(@HMul.hMul.{{u_1, u_1, u_1}} G G G {_MUL} h g)"
)
GROUP_INSTANCES = {
    "instHMul", "MulOneClass.toMul", "Monoid.toMulOneClass", "DivInvMonoid.toMonoid",
    "Group.toDivInvMonoid",
}  # fmt: skip

# What a model may not put in instance position, as Lean prints each spelling of the issue.
REFUSED = {
    # `@LT.lt ℕ ⟨fun _ _ => True⟩ 5 3`, `LT.lt (self := ⟨…⟩) 5 3`, `(⟨…⟩ : LT ℕ).lt 5 3`,
    # `({ lt := … } : LT ℕ).lt 5 3`, `by exact ⟨…⟩`: all elaborate to the constructor
    "constructor": (lt("@LT.mk.{0} Nat fun (x x_1 : Nat) => True", num(5), num(3)), "LT.mk"),
    # `@OfNat.ofNat ℕ (nat_lit 2) ⟨3⟩ + 2 = 5`
    "OfNat literal": (
        f"@Eq.{{1}} Nat (@HAdd.hAdd.{{0, 0, 0}} Nat Nat Nat (@instHAdd.{{0}} Nat (instAddNat : "
        f"Add.{{0}} Nat) : HAdd.{{0, 0, 0}} Nat Nat Nat) (@OfNat.ofNat.{{0}} Nat 2 "
        f"(@OfNat.mk.{{0}} Nat 2 3 : OfNat.{{0}} Nat 2)) {num(2)}) {num(5)}",
        "OfNat.mk",
    ),
    "lambda": (
        lt("fun (x : Nat) => LT.mk.{0} Nat fun (a b : Nat) => True", num(5), num(3)),
        "a lambda whose body is LT.mk",
    ),
    "let": (lt("let i : LT.{0} Nat := instLTNat; i", num(5), num(3)), "a `let`"),
    "anonymous constructor": (lt("⟨fun (x x_1 : Nat) => True⟩", num(5), num(3)), "⟨…⟩"),
    "structure literal": (lt("{ lt := fun (x x_1 : Nat) => True }", num(5), num(3)), "{ … }"),
    "block constant": (lt("myLT", num(5), num(3)), "myLT, a constant of the block"),
    "explicit variable": (
        "∀ (i : LT.{0} Nat), " + lt("i", num(5), num(3)),
        "the variable i, not an instance binder",
    ),
}


def answer(check: str, instances: set[str] = CORE) -> Answer:
    text = check if check.startswith("@foo") else f"@foo : {check}"
    return Answer(check=text, instances=set(instances))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_instance_argument_that_is_not_an_instance_is_refused_and_flagged(case: str) -> None:
    check, why = REFUSED[case]
    gen = judge("foo", answer(check), declared=["myLT", "foo"], trust=GEN)
    assert gen.refusals and {v.rule for v in gen.refusals} == {"elaborated"}, case
    assert why in gen.refusals[0].detail and "instance argument" in gen.refusals[0].detail
    bench = judge("foo", answer(check), declared=["myLT", "foo"], trust=BENCH)
    assert not bench.refusals, case  # a person's context: flagged, not refused
    assert [why in f.detail for f in bench.flags] == [True], case


def test_global_instances_instance_binders_and_their_projections_pass() -> None:
    assert judge("foo", answer(GROUP, GROUP_INSTANCES), declared=["foo"], trust=GEN) == judge(
        "foo", answer(GROUP, GROUP_INSTANCES), declared=["foo"], trust=BENCH
    )
    r = judge("foo", answer(GROUP, GROUP_INSTANCES), declared=["foo"], trust=GEN)
    assert not r.refusals and not r.flags
    core = judge("foo", answer(lt("instLTNat", num(5), num(3))), declared=["foo"], trust=GEN)
    assert not core.refusals and not core.flags
    # a projection of an instance binder's variable; a binder of a dependent arrow
    proj = "∀ {α : Type} [inst : LinearOrder.{0} α] (a : α), " + (
        "@LT.lt.{0} α (inst.1 : LT.{0} α) a a"
    )
    assert not judge("foo", answer(proj), declared=["foo"], trust=GEN).refusals
    arrow = "∀ (f : (n : Nat) → Fin n), [inst : LT.{0} Nat] → " + lt("inst", num(1), num(2))
    assert not judge("foo", answer(arrow), declared=["foo"], trust=GEN).refusals
    # `f + g` of functions ℕ → ℝ: Pi.instAdd takes a family of instances, a lambda
    family = (
        "∀ (f g : Nat → Real), @Eq.{1} (Nat → Real) (@HAdd.hAdd.{0, 0, 0} (Nat → Real) "
        "(Nat → Real) (Nat → Real) (@instHAdd.{0} (Nat → Real) (@Pi.instAdd.{0, 0} Nat "
        "(fun (i : Nat) => Real) (fun (i : Nat) => Real.instAdd : (i : Nat) → "
        "Add.{0} Real) : Add.{0} (Nat → Real)) : HAdd.{0, 0, 0} (Nat → Real) (Nat → Real) "
        "(Nat → Real)) f g) (@HAdd.hAdd.{0, 0, 0} (Nat → Real) (Nat → Real) (Nat → Real) "
        "(@instHAdd.{0} (Nat → Real) (@Pi.instAdd.{0, 0} Nat (fun (i : Nat) => Real) "
        "(fun (i : Nat) => Real.instAdd : (i : Nat) → Add.{0} Real) : "
        "Add.{0} (Nat → Real)) : HAdd.{0, 0, 0} (Nat → Real) (Nat → Real) (Nat → Real)) g f)"
    )
    pi = {"instHAdd", "Pi.instAdd", "Real.instAdd"}
    assert not judge("foo", answer(family, pi), declared=["foo"], trust=GEN).refusals
    assert judge("foo", answer(family, pi - {"Real.instAdd"}), declared=["foo"], trust=GEN).refusals


def test_a_parent_projection_lean_does_not_list_as_an_instance_is_refused() -> None:
    # the instance table is Lean's: drop one parent from it and the same type is refused
    table = GROUP_INSTANCES - {"Monoid.toMulOneClass"}
    r = judge("foo", answer(GROUP, table), declared=["foo"], trust=GEN)
    assert r.refusals and "Monoid.toMulOneClass, which is not an instance" in r.refusals[0].detail


def test_sorry_in_the_type_is_refused_at_both_levels() -> None:
    # `∀ n : ℕ, n < (by stop exact 0)`: `stop` is `repeat sorry`, the type holds `sorryAx`
    stop = "∀ (n : Nat), " + lt("instLTNat", "n", "(@sorryAx.{1} Nat Bool.true)")
    for trust in (GEN, BENCH):
        r = judge("foo", answer(stop), declared=["foo"], trust=trust)
        assert r.refusals and "built on `sorry` (`sorryAx`)" in r.refusals[0].detail
    in_instance = lt("@sorryAx.{1} (LT.{0} Nat) Bool.true", num(1), num(2))
    r = judge("foo", answer(in_instance), declared=["foo"], trust=BENCH)
    assert r.refusals and any("`sorry`" in f.detail for f in r.flags)


def test_a_constant_of_a_models_block_may_not_occur_in_the_type() -> None:
    uses = "@Eq.{1} Nat (helper " + num(3) + ") " + num(5)
    r = judge("foo", answer(uses), declared=["helper", "foo"], trust=GEN)
    assert [v.detail for v in r.refusals] == ["the type of foo uses helper, declared by the block"]
    # a person's context defines what its statement is about
    assert not judge("foo", answer(uses), declared=["helper", "foo"], trust=BENCH).refusals
    # a bound variable named like the block's constant is not the constant
    bound = "∀ (helper : Nat → Nat), @Eq.{1} Nat (helper " + num(3) + ") " + num(5)
    assert not judge("foo", answer(bound), declared=["helper", "foo"], trust=GEN).refusals


UNREADABLE = {
    "elided": (answer(lt("⋯", num(5), num(3))), "elided term"),
    "metavariable": (answer(lt("?m.5", num(5), num(3))), "metavariable"),
    "unclosed": (answer("@LT.lt.{0} Nat (instLTNat : LT.{0} Nat"), "expected ')'"),
    "garbage": (Answer(check="this is not a type", instances=CORE), "no `:`"),
    "other constant": (Answer(check="@bar : True", instances=set()), "answered for 'bar'"),
    "no check": (Answer(instances=CORE), "no `#check` answer"),
    "no instance table": (Answer(check="@foo : True"), "no `#eval` answer"),
    "an error": (Answer(error="unknown constant"), "Lean said 'unknown constant'"),
    "notation from a real Lean": (answer("5 < 3"), "unexpected '<'"),
    "tactic block": (answer(lt("by exact instLTNat", num(5), num(3))), "tactic block"),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_an_answer_math2_cannot_read_is_not_verified(case: str) -> None:
    got, why = UNREADABLE[case]
    for trust in (GEN, BENCH):
        r = judge("foo", got, declared=["foo"], trust=trust)
        assert len(r.refusals) == 1, case
        assert r.refusals[0].detail.startswith("not verified: the elaborated type of foo")
        assert why in r.refusals[0].detail, (case, r.refusals[0].detail)


def test_reading_the_elaborated_type_needs_no_network_and_no_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("reading the elaborated type opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    check, _ = REFUSED["constructor"]
    assert judge("foo", answer(check), declared=["foo"], trust=GEN).refusals
    assert not judge("foo", answer(GROUP, GROUP_INSTANCES), declared=["foo"], trust=GEN).refusals


def test_math2s_commands_name_everything_from_the_root_and_quote_the_target() -> None:
    check, ask = commands_for("Foo.«two plus two»")
    assert check.startswith("set_option pp.all true in ")
    assert "set_option pp.instanceTypes true in " in check
    assert check.endswith("#check @_root_.Foo.«two plus two»")  # no open namespace redirects it
    assert "\n" not in check and "\n" not in ask  # one line each: a line says which answered
    assert "`Foo.«two plus two»" in ask and "_root_.Lean.Meta.isInstance" in ask
    assert instances_answer("math2-instances Foo.«two plus two»: instLTNat Nat.instDvdNat") == (
        "Foo.«two plus two»",
        {"instLTNat", "Nat.instDvdNat"},
    )
    assert instances_answer("math2-instances foo:") == ("foo", set())
    assert instances_answer("'foo' depends on axioms: [sorryAx]") is None


def test_the_reader_reads_binders_universes_and_inaccessible_names() -> None:
    name, binders, body = read_signature(
        "@foo.{u_1, u_2} {α : Sort (max 1 u_1)} [inst✝ : LT.{u_1} α] : ∀ (a : α), "
        "@LT.lt.{u_1} α (inst✝ : LT.{u_1} α) a a"
    )
    assert name == "foo" and [b.names for b in binders] == [["α"], ["inst✝"]]
    assert [b.bracket for b in binders] == ["{", "["]
    assert body.kind == "bind" and body.text == "∀"
    with pytest.raises(Unreadable):
        read("@f x ⋯")
    # a double's answer keeps the block's notation; a real Lean's may not
    ops = read("a + b < ‖c‖⁻¹", notation=True).args
    assert [a.text for a in ops if a.kind == "op"] == ["+", "<", "‖", "‖", "⁻", "¹"]
    with pytest.raises(Unreadable):
        read("a + b < c")


@pytest.mark.data("lean-repl-transcripts")
def test_a_real_check_answer_of_the_repl_is_read() -> None:
    # `#check demo` in the REPL's own Mathlib transcript: a signature with binders before `:`
    import json

    out = (real_data("lean-repl-transcripts") / "mathlib_file_env.expected.out").read_text()
    frames = [json.loads(f) for f in out.split("\n\n") if f.strip()]
    said = [m["data"] for f in frames for m in f.get("messages", []) if m["severity"] == "info"]
    demo = next(d for d in said if d.startswith("demo "))
    name, binders, body = read_signature(demo)
    assert name == "demo" and binders[0].names == ["P", "Q", "R"] and body.text == "→"
    r = judge("demo", Answer(check=demo, instances=set()), declared=["demo"], trust=GEN)
    assert not r.refusals and not r.flags


def test_a_binder_named_like_a_namespace_does_not_make_its_constants_variables() -> None:
    """`[Preorder : Inhabited ℕ]` binds `Preorder`, not `Preorder.lift`: a constant under a
    namespace a binder is named after is still judged as a constant (review finding)."""
    inner = "(@Preorder.lift.{0, 0} Nat Nat (fun (x : Nat) => 0) : Preorder.{0} Nat)"
    check = "∀ [Preorder : Inhabited.{1} Nat], " + lt(
        f"@Preorder.toLT.{{0}} Nat {inner}", num(5), num(3)
    )
    instances = CORE | {"Preorder.toLT"}
    gen = judge("foo", answer(check, instances), declared=["foo"], trust=GEN)
    assert [v.rule for v in gen.refusals] == ["elaborated"]
    assert "Preorder.lift, which is not an instance" in gen.refusals[0].detail
    # a raw projection of an instance binder (`inst.1`) is still the binder's
    ok = "∀ [inst : Preorder.{0} Nat], " + lt("inst.1", num(5), num(3))
    assert not judge("foo", answer(ok), declared=["foo"], trust=GEN).refusals
