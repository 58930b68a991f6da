"""Notation a Lean library declares, read from its source: which symbols stand for which
constant (issue 33 §3).

Every notation-declaring command — `notation`, `notation3`, `infix`, `infixl`, `infixr`,
`prefix`, `postfix` (each possibly `scoped`, `scoped[NS]` or `local`, after attributes such as
`@[inherit_doc]`) and `macro_rules` — is read from the lexer's code view (comments and strings
blanked, offsets kept: `math2.lean.syntax.mask`) with the atoms taken from the original text:

    infixr:80 " ⁻¹' " => preimage                           -- ⁻¹'  → preimage
    scoped[Topology] notation "𝓝" => nhds                   -- 𝓝    → nhds
    notation:25 M " →L[" R "] " M₂ => ContinuousLinearMap (RingHom.id R) M M₂
    notation3 "∀ᶠ "(...)" in "f", "r:(scoped p => Filter.Eventually p f) => r
    macro_rules | `($R[$M]) => `(MonoidAlgebra $R $M)

A `Notation` keeps the atoms (the string literals of the left-hand side, stripped), whether
the first item is an atom (a prefix or closed notation, `𝓝`, `𝔸(`) or an operand (an infix
one, `→L[`), its precedence, and the constants of what it unfolds to in order: the
right-hand side's identifiers that are neither the notation's own variables nor keywords, or,
when the right-hand side is one variable bound by a `(scoped x => body)` item, that body's.
Names are as written (`preimage` inside `namespace Set`): the namespace they were written in is
kept, and a reader resolves them against the library's declarations.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

COMMANDS = ("notation3", "notation", "infixl", "infixr", "infix", "prefix", "postfix")
# The start of a notation command in the code view (at a line start; attributes and scope
# modifiers before the keyword).
START = re.compile(
    r"^[ \t]*(?:@\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\s*)*"
    r"(?P<scope>(?:scoped(?:\[[^\]\n]*\])?|local)\s+)?"
    r"(?P<kw>notation3|notation|infixl|infixr|infix|prefix|postfix|macro_rules)\b",
    re.M,
)
_END = re.compile(r"\n(?=\S)")
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_PART = r"(?:«[^»]*»|[^\W\d][\w'!?₀-₉ₐ-ₜᵢ-ᵪ]*)"
_IDENT = re.compile(rf"@?{_PART}(?:\.{_PART})*")
_PREC = re.compile(r"\s*:\s*(\d+|max|arg|lead|min)")
_OPTION = re.compile(r"\s*\((?:name|priority|kind)\s*:=[^)]*\)")
_SCOPED = re.compile(r"\(\s*scoped\s+(?P<binders>[^=]*?)=>(?P<body>[^()]*(?:\([^()]*\)[^()]*)*)\)")
_QUOTE = re.compile(r"`\((?:\w+\|)?")
_KEYWORD_LIST = "fun λ by scoped at in with match if then else let have show from do return pure"
_KEYWORDS = frozenset(f"{_KEYWORD_LIST} Type Prop Sort _ term tactic".split())
_PRECEDENCE = {"max": 1024, "arg": 1023, "lead": 1022, "min": 10}


@dataclass(frozen=True, slots=True)
class Notation:
    """One notation command (see the module docstring)."""

    kind: str  # notation, notation3, infixl, …, macro_rules
    atoms: tuple[str, ...]  # its string literals, stripped, in order
    constants: tuple[str, ...]  # what it unfolds to, as written, in order
    namespace: str  # the namespace it was declared in (names resolve inside it)
    leading_atom: bool  # the first item is an atom (prefix/closed notation), not an operand
    precedence: int | None
    local: bool  # `local notation`: this file only
    line: int
    scoped: bool = False  # `scoped` / `scoped[NS]`: active only where its namespace is open
    scope: str = ""  # the namespace a scoped notation belongs to (`NS`, else where declared)
    postfix: bool = False  # an operand, then its one atom (`postfix`, `α "ᵒᵖ" => Opposite α`)

    @property
    def symbol(self) -> str | None:
        """The atom a reader looks for: the first one that is not punctuation alone."""
        return next((a for a in self.atoms if is_symbol(a)), None)


def is_symbol(atom: str) -> bool:
    """An atom that identifies a notation: not brackets or punctuation alone, not a plain
    ASCII word (`in`, `with`), not one ASCII character."""
    if not atom or all(c in "()[]{}⟨⟩,;:|.'\"" for c in atom):
        return False
    return not (atom.isascii() and (len(atom) < 2 or re.fullmatch(r"[A-Za-z_]\w*", atom)))


def variable_letter(atom: str) -> bool:
    """A one-letter atom that is far more often a variable than the notation: an ASCII or
    Greek letter (`η`, `δ`, `ι`); `𝕎`, `𝓝`, `ℍ` are notation."""
    return len(atom) == 1 and (atom.isascii() or unicodedata.name(atom, "").startswith("GREEK"))


def _variables(lhs_code: str) -> set[str]:
    """The notation's own variables: identifiers of its left-hand side (strings blanked)."""
    return {m.group(0).lstrip("@") for m in _IDENT.finditer(lhs_code)}


def _constants(code: str, exclude: set[str]) -> list[str]:
    out: list[str] = []
    for m in _IDENT.finditer(code):
        name = m.group(0).lstrip("@")
        if m.start() > 0 and code[m.start() - 1] == "$":  # an antiquotation `$x`
            continue
        if code.startswith("%", m.end()):  # an elaborator (`binrel% LE.le a b`), not a constant
            continue
        if name in exclude or name in _KEYWORDS or name.split(".")[0] in exclude:
            continue
        if name not in out:
            out.append(name)
    return out


def _top_level_arrow(code: str, start: int, end: int) -> int:
    depth = 0
    i = start
    while i < end - 1:
        c = code[i]
        if c in "([{⟨":
            depth += 1
        elif c in ")]}⟩":
            depth = max(0, depth - 1)
        elif c == "=" and code[i + 1] == ">" and depth == 0:
            return i
        i += 1
    return -1


def read_notation(code: str, text: str, m: re.Match[str], namespace: str) -> list[Notation]:
    """The notations of the command that `START` matched at `m` (one per `macro_rules`
    alternative)."""
    kw = m.group("kw")
    start = m.end()
    end_m = _END.search(code, start)
    end = end_m.start() if end_m else len(code)
    line = code.count("\n", 0, m.start()) + 1
    local = (m.group("scope") or "").strip() == "local"
    scoped = (m.group("scope") or "").startswith("scoped")
    bracket = re.search(r"\[([^\]]*)\]", m.group("scope") or "")
    scope = bracket.group(1).strip() if bracket else (namespace if scoped else "")
    if kw == "macro_rules":
        return _macro_rules(code, text, start, end, namespace, line)
    prec = None
    if pm := _PREC.match(code, start):
        prec = int(pm.group(1)) if pm.group(1).isdigit() else _PRECEDENCE[pm.group(1)]
        start = pm.end()
    while om := _OPTION.match(code, start):
        start = om.end()
    arrow = _top_level_arrow(code, start, end)
    for _ in range(3):  # a comment at column 0 inside the command ends a line of it early
        if arrow >= 0 or end >= len(code):
            break
        nxt = _END.search(code, end + 1)
        end = nxt.start() if nxt else len(code)
        arrow = _top_level_arrow(code, start, end)
    if arrow < 0:
        return []
    lhs_text, lhs_code = text[start:arrow], code[start:arrow]
    atoms = tuple(s.strip() for s in _STRING.findall(lhs_text))
    if not atoms:
        return []
    variables = _variables(_SCOPED.sub(" ", lhs_code))
    rhs = code[arrow + 2 : end]
    constants = _constants(rhs, variables)
    if not constants:  # `=> r` with `r:(scoped f => Finset.sum s f)`: the scoped body's
        for sm in _SCOPED.finditer(lhs_code):
            bound = set(_IDENT.findall(sm.group("binders"))) | variables
            constants = _constants(sm.group("body"), bound)
            if constants:
                break
    leading = kw == "prefix" or (kw in COMMANDS[:2] and lhs_text.lstrip().startswith('"'))
    # `α "ᵒᵖ" => Opposite α`: an operand, then one atom
    postfix = kw == "postfix" or (
        kw in COMMANDS[:2] and len(atoms) == 1 and not leading and lhs_text.rstrip().endswith('"')
    )
    return [
        Notation(
            kind=kw, atoms=atoms, constants=tuple(constants), namespace=namespace,
            leading_atom=leading, precedence=prec, local=local, line=line, scoped=scoped,
            scope=scope, postfix=postfix,
        )
    ]  # fmt: skip


def _macro_rules(
    code: str, text: str, start: int, end: int, namespace: str, line: int
) -> list[Notation]:
    """`macro_rules | `(pattern) => `(output)`: the pattern's symbols (code outside `$x`
    antiquotations and identifiers) and the output quotation's first constants."""
    out: list[Notation] = []
    body = code[start:end]
    for alt in re.split(r"(?:^|\n)\s*\|", body):
        q = _QUOTE.search(alt)
        arrow = alt.find("=>", q.end()) if q else -1
        if q is None or arrow < 0 or re.match(r"`\((?:tactic|command|doElem)\|", alt[q.start() :]):
            continue
        pattern = alt[q.end() : arrow]
        pattern = re.sub(r"\$\[?[\w?]+(?::\w+)?\]?\*?", " ", pattern)
        symbols = [
            s
            for s in re.split(r"[\s\w$]+|[()\[\],]", pattern)
            if s and is_symbol(s) and not s.isascii()
        ]
        oq = _QUOTE.search(alt, arrow)
        if not symbols or oq is None:
            continue
        constants = _constants(alt[oq.end() :], set())
        if constants:
            out.append(
                Notation(
                    kind="macro_rules", atoms=tuple(symbols), constants=tuple(constants[:3]),
                    namespace=namespace, leading_atom=pattern.lstrip()[:1] not in "$",
                    precedence=None, local=False, line=line,
                )
            )  # fmt: skip
    return out
