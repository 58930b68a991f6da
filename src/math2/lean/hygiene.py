"""Statement hygiene for autoformalized Lean: what may be compiled, and what a result must show.

Before compiling (static, never runs anything): exactly one `theorem`/`lemma`, named as asked,
with `sorry` as its only proof; no axioms, opaque constants, instances, notations, macros,
elaborators, syntax, attributes, `#eval`/`#exit`/`run_cmd`, IO, `unsafe`, `extern`,
`implemented_by`; `set_option` only from an allowlist; `autoImplicit` turned off by a preamble.
After compiling: no errors, `sorry` only where the proof is, and `#print axioms` lists only
`propext`, `Classical.choice`, `Quot.sound` and `sorryAx`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from math2.lean.lexer import LexError, Tok, Token, suspicious_characters, tokenize

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
ALLOWED_AXIOMS = STANDARD_AXIOMS | {"sorryAx"}

# The preamble math2 puts in front of every statement it compiles.
PREAMBLE = "set_option autoImplicit false\nset_option relaxedAutoImplicit false\n"
PREAMBLE_LINES = PREAMBLE.count("\n")

_THEOREM = {"theorem", "lemma"}
_OTHER_DECLS = {
    "def",
    "abbrev",
    "example",
    "structure",
    "class",
    "inductive",
    "coinductive",
    "instance",
    "axiom",
    "axioms",
    "opaque",
    "constant",
    "mutual",
    "partial",
    "unsafe",
    "noncomputable",
    "private",
    "protected",
    "alias",
    "export",
    "deriving",
}
_FORBIDDEN = {
    "notation": "defines notation",
    "infix": "defines notation",
    "infixl": "defines notation",
    "infixr": "defines notation",
    "prefix": "defines notation",
    "postfix": "defines notation",
    "macro": "defines a macro",
    "macro_rules": "defines a macro",
    "elab": "defines an elaborator",
    "elab_rules": "defines an elaborator",
    "syntax": "defines syntax",
    "declare_syntax_cat": "defines syntax",
    "attribute": "changes attributes",
    "run_cmd": "runs code",
    "run_tac": "runs code",
    "run_elab": "runs code",
    "run_meta": "runs code",
    "initialize": "runs code at load time",
    "builtin_initialize": "runs code at load time",
    "implemented_by": "replaces code (implemented_by)",
    "extern": "calls external code (extern)",
    "unsafe": "uses unsafe code",
    "local": "changes local notation, instances or attributes",
    "import": "imports beyond the header",
    "include": "changes the section's variables",
    "omit": "changes the section's variables",
}
_FORBIDDEN_HASH = {"#exit", "#eval", "#reduce", "#print", "#check_failure", "#guard", "#guard_msgs"}
_FORBIDDEN_NAMES = re.compile(r"^(IO|EIO|BaseIO|System|Lean\.(Elab|Meta|Compiler|IR))(\.|$)")
# Options a statement may set; a value that weakens checking is refused below.
_ALLOWED_OPTIONS = re.compile(
    r"^(maxHeartbeats|maxRecDepth|synthInstance\.maxHeartbeats"
    r"|pp\.[\w.]+|linter\.[\w.]+|autoImplicit|relaxedAutoImplicit)$"
)


class Violation(BaseModel):
    """One reason a statement is refused."""

    rule: str
    line: int | None
    detail: str


class HygieneReport(BaseModel):
    """The static verdict on a statement."""

    ok: bool
    violations: list[Violation]
    theorem_name: str | None = None

    @property
    def reason(self) -> str:
        """All violations, one per line."""
        return "; ".join(
            f"{v.rule} (line {v.line}): {v.detail}" if v.line else f"{v.rule}: {v.detail}"
            for v in self.violations
        )


def split_header(code: str) -> tuple[str, str]:
    """(import lines, the rest): imports form the pool key, the rest is checked and compiled."""
    lines = code.split("\n")
    imports: list[str] = []
    body_start = len(lines)
    in_block = False
    for idx, line in enumerate(lines):
        stripped = line.strip()
        if in_block or stripped.startswith("/-"):
            in_block = "-/" not in stripped
        elif stripped.startswith("import "):
            imports.append(stripped)
        elif stripped and not stripped.startswith("--"):
            body_start = idx
            break
    return "\n".join(imports), "\n".join(lines[body_start:])


def check_statement(
    body: str,
    *,
    name: str | None = None,
    header: str = "import Mathlib",
    allowed_imports: frozenset[str] | None = None,
    require_sorry: bool = True,
) -> HygieneReport:
    """Static hygiene of a statement body (text after the import header). Runs nothing.

    With `require_sorry=False` (a proof), the proof may be anything but the other rules hold.
    """
    v: list[Violation] = []
    if allowed_imports is not None:
        for imp in header.split("\n"):
            mod = imp.removeprefix("import ").strip()
            if mod and mod not in allowed_imports:
                v.append(Violation(rule="import", line=None, detail=f"import {mod} is not allowed"))
    for line, what in suspicious_characters(body):
        v.append(Violation(rule="characters", line=line, detail=what))
    try:
        toks = [t for t in tokenize(body) if t.kind is not Tok.DOC]
    except LexError as exc:
        v.append(Violation(rule="syntax", line=exc.line, detail=exc.reason))
        return HygieneReport(ok=False, violations=v)

    theorems: list[int] = []
    for i, t in enumerate(toks):
        if t.kind is Tok.KEYWORD and t.text in _FORBIDDEN_HASH:
            v.append(Violation(rule="command", line=t.line, detail=f"{t.text} is not allowed"))
        elif t.kind is Tok.IDENT:
            if t.text in _FORBIDDEN:
                v.append(
                    Violation(
                        rule="command", line=t.line, detail=f"`{t.text}` {_FORBIDDEN[t.text]}"
                    )
                )
            elif t.text in _OTHER_DECLS and not _noncomputable_section(toks, i):
                v.append(
                    Violation(
                        rule="one theorem",
                        line=t.line,
                        detail=f"`{t.text}` declares something besides the theorem",
                    )
                )
            elif t.text in _THEOREM:
                theorems.append(i)
            elif _FORBIDDEN_NAMES.match(t.text):
                v.append(Violation(rule="io", line=t.line, detail=f"`{t.text}` is not allowed"))
        elif t.kind is Tok.SYMBOL and t.text == "@[":
            v.append(
                Violation(
                    rule="attribute",
                    line=t.line,
                    detail="attributes are not allowed on a statement",
                )
            )
    v.extend(_check_options(toks))

    theorem_name = None
    if len(theorems) != 1:
        v.append(
            Violation(
                rule="one theorem",
                line=None,
                detail=f"expected exactly one theorem, found {len(theorems)}",
            )
        )
    else:
        i = theorems[0]
        if i + 1 < len(toks) and toks[i + 1].kind is Tok.IDENT:
            theorem_name = toks[i + 1].text.replace("«", "").replace("»", "")
        if name is not None and theorem_name != name:
            v.append(
                Violation(
                    rule="name",
                    line=toks[i].line,
                    detail=f"theorem is named {theorem_name!r}, expected {name!r}",
                )
            )
        if require_sorry:
            v.extend(_check_proof(toks, i))
    return HygieneReport(ok=not v, violations=v, theorem_name=theorem_name)


def _noncomputable_section(toks: list[Token], i: int) -> bool:
    return toks[i].text == "noncomputable" and i + 1 < len(toks) and toks[i + 1].text == "section"


def _check_options(toks: list[Token]) -> list[Violation]:
    out = []
    for i, t in enumerate(toks):
        if t.kind is not Tok.IDENT or t.text != "set_option":
            continue
        opt = toks[i + 1].text if i + 1 < len(toks) else ""
        val = toks[i + 2].text if i + 2 < len(toks) else ""
        if not _ALLOWED_OPTIONS.match(opt):
            out.append(
                Violation(rule="set_option", line=t.line, detail=f"option {opt} is not allowed")
            )
        elif opt in ("autoImplicit", "relaxedAutoImplicit") and val != "false":
            out.append(Violation(rule="set_option", line=t.line, detail=f"{opt} must stay false"))
    return out


_OPEN = {"(", "[", "{", "⟨", "@[", "⦃", "‹"}
_CLOSE = {")", "]", "}", "⟩", "⦄", "›"}


def _check_proof(toks: list[Token], start: int) -> list[Violation]:
    """After the theorem's top-level `:=` comes exactly `sorry` or `by sorry` (then `end`s)."""
    depth = 0
    for j in range(start + 1, len(toks)):
        t = toks[j]
        if t.kind is Tok.SYMBOL and t.text in _OPEN:
            depth += 1
        elif t.kind is Tok.SYMBOL and t.text in _CLOSE:
            depth -= 1
        elif t.kind is Tok.IDENT and t.text == "sorry":
            return [Violation(rule="sorry", line=t.line, detail="`sorry` in the statement itself")]
        elif depth == 0 and t.kind is Tok.SYMBOL and t.text == ":=":
            rest = [x.text for x in toks[j + 1 :]]
            proof = rest[: rest.index("end")] if "end" in rest else rest
            if proof in (["sorry"], ["by", "sorry"]):
                return []
            shown = " ".join(proof)[:60]
            return [
                Violation(
                    rule="proof", line=t.line, detail=f"the proof must be `sorry`, found `{shown}`"
                )
            ]
    return [Violation(rule="proof", line=toks[start].line, detail="no `:= sorry` found")]


def prepare(body: str) -> str:
    """The text math2 compiles: the preamble that turns autoImplicit off, then the body."""
    return PREAMBLE + body


_AXIOMS_RE = re.compile(r"depends on axioms:\s*\[(?P<list>[^\]]*)\]", re.S)


def parse_axioms(info: str) -> set[str] | None:
    """The axioms a `#print axioms` answer lists (empty set: none); None if it is not one."""
    if "does not depend on any axioms" in info:
        return set()
    m = _AXIOMS_RE.search(info)
    if not m:
        return None
    return {a.strip() for a in m.group("list").replace("\n", " ").split(",") if a.strip()}


def axiom_violations(axioms: set[str]) -> list[Violation]:
    """Axioms beyond the standard three and `sorryAx`."""
    extra = sorted(axioms - ALLOWED_AXIOMS)
    if not extra:
        return []
    return [Violation(rule="axioms", line=None, detail=f"depends on {', '.join(extra)}")]
