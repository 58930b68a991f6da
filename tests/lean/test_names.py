"""Names as Lean prints them (math2.lean.names), read in `#print axioms`, `#check` and error
answers; and the fake REPL, which tracks declarations one by one, against the real REPL
transcripts wherever they cover what it models."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from math2.lean.diagnostics import Kind, classify_text
from math2.lean.names import (
    axioms_subject,
    canonical,
    first_quoted,
    in_namespace,
    parts,
    printed,
    same,
    source,
)
from math2.lean.protocol import split_frames
from math2.lean.testing.fake_repl import Fake
from tests.data_conformance import real_data

# Lean's printing rule (Name.toString with escaping): a component is bare when it starts with
# an identifier letter and goes on with identifier characters, else it is put in «».
PRINTED = {
    ("mul_inv_cancel'",): "mul_inv_cancel'",
    ("even_add''",): "even_add''",
    ("two plus two",): "«two plus two»",
    ("Foo", "a.b"): "Foo.«a.b»",
    ("θ_pos",): "θ_pos",
    ("ℝ≥0",): "«ℝ≥0»",  # ≥ is no identifier character
    ("теорема",): "«теорема»",  # Cyrillic is not a Lean identifier letter
    ("Nat", "succ_le_iff"): "Nat.succ_le_iff",
    ("x₁",): "x₁",
    ("1st",): "«1st»",
    ("foo?", "bar!"): "foo?.bar!",
}


@pytest.mark.parametrize("components", sorted(PRINTED))
def test_printing_rule(components: tuple[str, ...]) -> None:
    text = PRINTED[components]
    assert printed(components) == text
    assert parts(text) == components  # read back: the dot in «a.b» stays in its component
    assert canonical(text) == text


def test_spellings_of_one_name_are_the_same_name() -> None:
    assert same("«foo»", "foo") and same("_root_.Nat.succ", "Nat.«succ»")
    assert not same("Foo.«a.b»", "Foo.a.b")
    assert canonical("«two plus two»") == "«two plus two»"
    assert source("Foo.«at»") == "Foo.«at»" and source("at") == "«at»"  # a keyword


def test_a_name_written_in_a_namespace_may_stand_for_each_enclosing_one() -> None:
    assert list(in_namespace("x", "A.B")) == ["A.B.x", "A.x", "x"]  # innermost first
    assert list(in_namespace("Real", "")) == ["Real"]
    assert list(in_namespace("C.x", "A")) == ["A.C.x", "C.x"]
    assert list(in_namespace("_root_.x", "A.B")) == ["x"]  # `_root_` escapes the namespace
    assert list(in_namespace("«x»", "A.«b.c»")) == ["A.«b.c».x", "A.x", "x"]  # printed form


# Components of names: anything but guillemets (which cannot be escaped), `_root_` left out.
_COMPONENTS = st.lists(
    st.text(min_size=1, max_size=6).filter(lambda c: "«" not in c and "»" not in c),
    max_size=4,
).filter(lambda cs: "_root_" not in cs)


@given(space=_COMPONENTS, written=_COMPONENTS.filter(bool))
def test_the_candidates_are_every_prefix_of_the_namespace_innermost_first(
    space: list[str], written: list[str]
) -> None:
    namespace = printed(space) if space else ""
    got = list(in_namespace(printed(written), namespace))
    assert [parts(c) for c in got] == [(*space[:k], *written) for k in range(len(space), -1, -1)]
    assert all(canonical(c) == c for c in got)  # as Lean prints them, as the tables key them
    assert list(in_namespace("_root_." + printed(written), namespace)) == [printed(written)]


@pytest.mark.parametrize(
    ("answer", "subject"),
    [
        ("'mul_inv_cancel'' depends on axioms: [propext, sorryAx]", "mul_inv_cancel'"),
        ("'even_add''' depends on axioms: [propext]", "even_add''"),
        ("'«two plus two»' depends on axioms: [sorryAx]", "«two plus two»"),
        ("'Foo.«a.b»' does not depend on any axioms", "Foo.«a.b»"),
        ("'«теорема»' depends on axioms: [sorryAx]", "«теорема»"),
        (
            "'Classical.em' depends on axioms: [propext, Classical.choice, Quot.sound]",
            "Classical.em",
        ),
        ("unknown constant 'foo'", None),
    ],
)
def test_print_axioms_answers(answer: str, subject: str | None) -> None:
    assert axioms_subject(answer) == subject


@pytest.mark.parametrize(
    ("message", "kind", "name"),
    [
        ("unknown identifier 'mul_inv_cancel''", Kind.UNKNOWN_IDENTIFIER, "mul_inv_cancel'"),
        ("Unknown identifier `«two plus two»`", Kind.UNKNOWN_IDENTIFIER, "«two plus two»"),
        ("Unknown constant `Foo.«a.b»`", Kind.UNKNOWN_CONSTANT, "Foo.«a.b»"),
        ("unknown constant 'x'", Kind.UNKNOWN_CONSTANT, "x"),
        ("Unknown identifier `g`", Kind.UNKNOWN_IDENTIFIER, "g"),  # real Lean (transcripts)
        ("'foo'' has already been declared", Kind.ALREADY_DECLARED, "foo'"),
    ],
)
def test_error_answers_name_what_lean_printed(message: str, kind: Kind, name: str) -> None:
    assert classify_text(message) == (kind, name)
    assert first_quoted(message) == name


def _fake(**kw: object) -> Fake:
    args = argparse.Namespace(
        wording="new", check_delay=0.0, header_delay=0.0, library=None, rule=[], replay=None
    )
    for k, v in kw.items():
        setattr(args, k, v)
    return Fake(args)


def _messages(out: dict) -> list[str]:
    return [m["data"] for m in out.get("messages", [])]


def test_the_fake_tracks_declarations_one_by_one() -> None:
    fake = _fake()
    cmd = (
        "def invNum (n : ℕ) : ℕ := n + 1\n"
        "structure IsMagicSquare (n : ℕ) : Prop where\n  ok : n = n\n"
        "inductive Col where\n  | red | green\n"
        "theorem foo : IsMagicSquare (invNum 3) := by sorry\n"
        "theorem bar : invNum 1 = 2 := by simp [foo]\n"
        "#print axioms invNum\n#print axioms IsMagicSquare\n#print axioms Col.red\n"
        "#print axioms foo\n#print axioms bar"
    )
    answers = [m for m in _messages(fake.command({"cmd": cmd})) if "axioms" in m]
    assert answers == [
        "'invNum' depends on axioms: [propext, Classical.choice, Quot.sound]",
        "'IsMagicSquare' depends on axioms: [propext, Classical.choice, Quot.sound]",
        "'Col.red' depends on axioms: [propext, Classical.choice, Quot.sound]",
        "'foo' depends on axioms: [propext, Classical.choice, Quot.sound, sorryAx]",
        "'bar' depends on axioms: [propext, Classical.choice, Quot.sound, sorryAx]",  # uses foo
    ]


def test_the_fake_prints_names_as_lean_does() -> None:
    fake = _fake()
    cmd = (
        "theorem mul_inv_cancel' : True := sorry\ntheorem «two plus two» : 2 + 2 = 4 := sorry\n"
        "namespace Foo\ntheorem «a.b» : True := sorry\nend Foo\n"
        "#print axioms mul_inv_cancel'\n#print axioms «two plus two»\n#print axioms Foo.«a.b»\n"
        "#check @«two plus two»"
    )
    got = _messages(fake.command({"cmd": cmd}))
    assert (
        "'mul_inv_cancel'' depends on axioms: [propext, Classical.choice, Quot.sound, sorryAx]"
        in got
    )
    assert any(m.startswith("'«two plus two»' depends on") for m in got)
    assert any(m.startswith("'Foo.«a.b»' depends on") for m in got)
    assert "@«two plus two» : 2 + 2 = 4" in got


def _pairs(folder: Path) -> list[tuple[str, dict, dict]]:
    out = []
    for f in sorted(folder.glob("*.in")):
        exp = f.with_suffix(".expected.out")
        if not exp.exists():
            continue
        reqs = [json.loads(x, strict=False) for x in split_frames(f.read_text(encoding="utf-8"))]
        resps = [json.loads(x, strict=False) for x in split_frames(exp.read_text(encoding="utf-8"))]
        for k, (rq, rs) in enumerate(zip(reqs, resps, strict=False)):
            if "cmd" in rq and "env" not in rq and "message" not in rs:
                out.append((f"{f.stem}#{k}", rq, rs))
    return out


def _sorry_places(out: dict) -> list[tuple[int, int]]:
    return sorted(
        (m["pos"]["line"], m["pos"]["column"])
        for m in out.get("messages", [])
        if "declaration uses" in m["data"] and "sorry" in m["data"]
    )


def _compare_sorry_places(folder: Path) -> int:
    """Real Lean warns once per declaration whose own text has `sorry`, at its name (at the
    `example` word for an example); the fake must agree on every transcript command that
    elaborated without errors. How many commands were compared."""
    compared = 0
    for where, req, real in _pairs(folder):
        if any(m["severity"] == "error" for m in real.get("messages", [])):
            continue
        fake = _fake().command({"cmd": req["cmd"]})
        assert _sorry_places(fake) == _sorry_places(real), (where, req["cmd"][:200])
        compared += bool(_sorry_places(real))
    return compared


def test_the_fakes_sorry_warnings_stand_where_lean_puts_them(transcripts: Path) -> None:
    """Over the transcripts written for math2 (tests/fixtures/repl/sorry_warnings.in: an
    example, several declarations in one command, a def, a namespace, a sorry in a branch)."""
    assert _compare_sorry_places(transcripts) >= 6  # none compared is a failure


@pytest.mark.data("lean-repl-transcripts")
def test_the_fakes_sorry_warnings_agree_with_every_real_transcript() -> None:
    """The same over the REPL's own transcripts (the data set `lean-repl-transcripts`)."""
    assert _compare_sorry_places(real_data("lean-repl-transcripts")) >= 30
