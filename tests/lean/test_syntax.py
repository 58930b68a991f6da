"""One lexer, one view per caller: hygiene's tokens, the source scanner's code view, the
attribute splitter of `to_additive` and a statement's identifiers all come from the same lexing,
on REPL transcripts (written for math2; the REPL's own in the conformance group) and on generated
text."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from math2.importers.lean_source import blank
from math2.importers.to_additive import split_attributes
from math2.lean.lexer import LexError, Tok, tokenize
from math2.lean.protocol import split_frames
from math2.lean.syntax import IDENT, Scope, constants_of, identifiers, mask, split_identifier
from tests.conftest import FIXTURES, nonempty
from tests.data_conformance import cases, real_data, real_folder

TRANSCRIPTS = FIXTURES / "repl"  # written for math2
REAL = real_folder("lean-repl-transcripts")
CODE = {Tok.IDENT, Tok.KEYWORD, Tok.SYMBOL, Tok.NUMBER}


def _commands(folder: Path | None = TRANSCRIPTS) -> list[str]:
    out: list[str] = []
    if folder is None:
        return out
    for path in sorted(folder.glob("*.in")):
        for frame in split_frames(path.read_text(encoding="utf-8")):
            cmd = json.loads(frame, strict=False).get("cmd")
            if cmd:
                out.append(cmd)
    return out


COMMANDS = _commands()
REAL_COMMANDS = _commands(REAL)


def token_view(text: str) -> str:
    """The text of the lexer's code tokens at their offsets, blanks elsewhere."""
    buf = [" "] * len(text)
    for t in tokenize(text):
        if t.kind in CODE:
            buf[t.offset : t.offset + len(t.text)] = t.text
    return "".join(buf)


def code_view(text: str) -> str:
    return "".join(" " if c.isspace() else c for c in mask(text).code)


def assert_one_lexing(text: str) -> None:
    """Every caller's view of `text` is the lexer's."""
    toks = tokenize(text)
    view = mask(text)
    # the scanner's view: the code tokens, nothing else; the doc comments are the DOC tokens
    assert code_view(text) == token_view(text)
    assert blank(text, "t.lean") == (view.code, view.docs)
    assert [(a, b) for a, b, _ in view.docs] == [
        (t.offset, t.offset + len(t.text)) for t in toks if t.kind is Tok.DOC
    ]
    assert len(view.code) == len(text) and view.code.count("\n") == text.count("\n")
    # a statement's identifiers: the IDENT tokens
    assert identifiers(text) == list(dict.fromkeys(t.text for t in toks if t.kind is Tok.IDENT))


def test_transcripts_have_commands() -> None:
    assert len(COMMANDS) >= 20, f"too few Lean commands in {TRANSCRIPTS}"


@pytest.mark.data("lean-repl-transcripts")
def test_real_transcripts_have_commands() -> None:
    real = real_data("lean-repl-transcripts")
    assert len(_commands(real)) >= 100, f"too few Lean commands in {real}"


@pytest.mark.parametrize(
    "text",
    nonempty(COMMANDS, "transcript commands")
    + cases("lean-repl-transcripts", REAL_COMMANDS, [str(i) for i in range(len(REAL_COMMANDS))], 1),
)
def test_every_caller_reads_a_transcript_the_same(text: str) -> None:
    assert_one_lexing(text)


def test_attribute_commas_are_the_lexers_top_level_commas() -> None:
    # to_additive's splitter cuts where the lexer sees a comma outside brackets
    body = 'simp, to_additive (attr := simp) foo "a, b" /-- c, d -/, norm_cast -- e, f'
    toks = tokenize(body)
    depth, cuts = 0, []
    for t in toks:
        depth += t.text in "([{⟨" and t.kind is Tok.SYMBOL
        depth -= t.text in ")]}⟩" and t.kind is Tok.SYMBOL
        if t.kind is Tok.SYMBOL and t.text == "," and depth == 0:
            cuts.append(t.offset)
    parts = split_attributes(body)
    assert len(parts) == len(cuts) + 1 == 3
    assert parts[1] == 'to_additive (attr := simp) foo "a, b" /-- c, d -/'


LEAN_BITS = st.sampled_from(
    [
        "theorem", " ", "\n", "x", "h'", "α", "ℝ", "Nat.succ", "«a b»", "_root_.f", ":=", "(",
        ")", "{", "}", "⟨", "⟩", ",", "'a'", "'\\n'", '"s"', '"a\\"b"', 's!"v {x} w"',
        'm!"e {y}"', 'f!"{z}"', 'r#"q"#', "-- c\n", "/- c -/", "/-- d -/", "/-! m -/",
        "/- a /- b -/ c -/", "x₁", "2", "0x1F", "1.5", "#eval ", "λ", "Σ", "+", "·", "!", "?",
        ".", "@[simp]", "'", "fun", "ₗ",
    ]
)  # fmt: skip


@pytest.mark.parametrize("text", ['0x1Ff!"{z}"', '0x1F f!"{z}"', '2f!"{z}"', '0b1s!"{x}"'])
def test_a_hex_digit_is_not_a_string_prefix(text: str) -> None:
    # `0x1Ff!"…"`: the lexer reads the number 0x1Ff, then `!`; mask once read an f!-string
    assert_one_lexing(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(LEAN_BITS, st.sampled_from([" ", "\n", "(", ")", ""])), max_size=30))
def test_generated_text_reads_the_same(bits: list[tuple[str, str]]) -> None:
    # pieces glued or apart; a hash command glued to a name (`#evalλs!"…"`) is left out
    text = "".join(a + b for a, b in bits)
    try:
        tokenize(text)
    except LexError:
        with pytest.raises(LexError):
            mask(text)
        return
    assert_one_lexing(text)


@settings(deadline=None)  # a shared machine: time is not what is tested
@given(st.text(alphabet="abAB_'!?.0123456789₁«»ℝλ ", max_size=20))
def test_ident_is_the_lexers_rule(text: str) -> None:
    try:
        toks = tokenize(text)
    except LexError:
        return
    names = [t.text for t in toks if t.kind is Tok.IDENT]
    assert identifiers(text) == list(dict.fromkeys(names))
    for n in names:
        assert IDENT.fullmatch(n)


def test_unterminated_parts_name_their_place() -> None:
    for text, reason in [
        ("a\n/- open", "unterminated comment"),
        ('x := "open', "unterminated string"),
        ("x «open", "unterminated «name»"),
    ]:
        with pytest.raises(LexError, match=reason) as info:
            mask(text)
        with pytest.raises(LexError, match=reason):
            tokenize(text)
        assert info.value.line == text.count("\n", 0, text.rfind(text.split()[-1])) + 1


def test_constants_of_without_names_keeps_dotted_or_capitalised() -> None:
    st_ = '∀ n : ℕ, Nat.Prime n → n ≥ 2 ∧ IsOpen s ∧ "Fake.name" = t -- Real.pi'
    assert constants_of(st_) == ["ℕ", "Nat.Prime", "IsOpen"]
    assert constants_of(None) == [] and constants_of("") == []


def test_constants_of_resolves_as_lean_does() -> None:
    names = {"A.B.foo", "A.foo", "foo", "bar", "Baz.qux", "A.B.me"}
    scope = Scope.of("A.B.me", names, short={"qux": ["Baz.qux"]})
    # innermost namespace first; `_root_.` escapes; a short name unique in the library
    assert constants_of("foo ∧ _root_.foo ∧ bar ∧ qux ∧ me ∧ nope", scope) == [
        "A.B.foo",
        "foo",
        "bar",
        "Baz.qux",
    ]
    assert constants_of("A.foo x", Scope.of("C.d", names)) == ["A.foo"]
    # a declaration is not in scope in its own statement
    assert constants_of("foo", Scope.of("A.B.foo", names)) == ["A.foo"]


def test_split_identifier() -> None:
    assert split_identifier("Nat.Prime.two_le") == ["nat", "prime", "two", "le"]
    assert split_identifier("HTTPServer.isOpen'") == ["http", "server", "is", "open"]
