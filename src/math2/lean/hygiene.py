"""Statement hygiene: what math2 lets reach Lean, and what a compiled result must show.

Every item is split into a trusted header (exact `import` lines from allowed roots), an untrusted
context and an untrusted target. The body is parsed into commands over the lexer's tokens and
checked against an allowlist (docs/lean.md): the target is one `theorem`/`lemma` whose proof is
`sorry`; the context may open, scope, declare variables and universes, set allowed options and
make definitions; every token of context and target passes the term rules (no meta code, no
IO or elaborator internals however spelled, no `sorry` but the proof). Nothing runs before this
says yes. After compiling: `#print axioms` lists only the standard axioms (and `sorryAx`), for a
constant with the expected full name.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

from math2.lean.commands import Command, split_code, split_commands
from math2.lean.lexer import (
    LexError,
    Tok,
    Token,
    interpolated_parts,
    suspicious_characters,
    tokenize,
)
from math2.lean.rules import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_MODIFIERS,
    ALLOWED_OPTION,
    CODE_WORDS,
    DEFAULT_MODULE_ROOTS,
    DEFINITION_KEYWORDS,
    FORBIDDEN_COMMANDS,
    FORBIDDEN_ROOTS,
    SCOPE_KEYWORDS,
    SORRY_WORDS,
    THEOREM_KEYWORDS,
    normalise_name,
)

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
ALLOWED_AXIOMS = STANDARD_AXIOMS | {"sorryAx"}

# The preamble math2 puts in front of every body it compiles.
PREAMBLE = "set_option autoImplicit false\nset_option relaxedAutoImplicit false\n"
PREAMBLE_LINES = PREAMBLE.count("\n")


class Strictness(StrEnum):
    """How much a check demands."""

    STATEMENT = "statement"  # one theorem, proof exactly `sorry`
    PROOF = "proof"  # one theorem, a proof without sorry
    RELAXED = "relaxed"  # any number of declarations; still nothing that runs code


class Violation(BaseModel):
    """One reason an item is refused, with its place (1-based line, 0-based column)."""

    rule: str
    line: int | None
    detail: str
    column: int | None = None

    def where(self) -> str:
        """`line L, column C` (or less)."""
        if self.line is None:
            return ""
        return f"line {self.line}" + (f", column {self.column}" if self.column is not None else "")


class HygieneReport(BaseModel):
    """The static verdict on an item."""

    ok: bool
    violations: list[Violation]
    theorem_name: str | None = None  # as written
    full_name: str | None = None  # with the enclosing namespaces

    @property
    def reason(self) -> str:
        """All violations, one after the other."""
        return "; ".join(
            f"{v.rule} ({v.where()}): {v.detail}" if v.line else f"{v.rule}: {v.detail}"
            for v in self.violations
        )


def split_header(code: str) -> tuple[str, str]:
    """(the trusted import lines, the body verbatim)."""
    sc = split_code(code)
    return sc.header, sc.body


def _v(rule: str, t: Token | None, detail: str, offset: int) -> Violation:
    if t is None:
        return Violation(rule=rule, line=None, detail=detail)
    return Violation(rule=rule, line=t.line + offset, column=t.col, detail=detail)


def check_header(
    header: str, roots: frozenset[str] = DEFAULT_MODULE_ROOTS, exact: frozenset[str] | None = None
) -> list[Violation]:
    """Each header line must be exactly `import M` with M under an allowed root."""
    out = []
    sc = split_code(header)
    if sc.body.strip():
        line = sc.body_line
        out.append(
            Violation(
                rule="header", line=line, column=0, detail="only `import` lines may stand here"
            )
        )
    for h in sc.imports:
        root = h.module.split(".")[0]
        if root not in roots or (exact is not None and h.module not in exact):
            out.append(
                Violation(
                    rule="import", line=h.line, column=0, detail=f"import {h.module} is not allowed"
                )
            )
    return out


def _term_rules(toks: list[Token], offset: int, allow_sorry: set[int]) -> list[Violation]:
    out = []
    for i, t in enumerate(toks):
        if t.kind is Tok.KEYWORD:
            out.append(_v("command", t, f"`{t.text}` commands are not allowed", offset))
        elif t.kind is Tok.IDENT:
            name = normalise_name(t.text)
            if name in CODE_WORDS or t.text in CODE_WORDS:
                out.append(_v("code", t, f"`{t.text}` {CODE_WORDS.get(name, 'runs code')}", offset))
            elif name in SORRY_WORDS:
                if i not in allow_sorry:
                    out.append(_v("sorry", t, f"`{t.text}` outside the proof", offset))
            elif FORBIDDEN_ROOTS.match(name):
                out.append(
                    _v("io", t, f"`{t.text}` reaches IO or Lean's internals ({name})", offset)
                )
        elif t.kind is Tok.STRING and not t.text.startswith("r"):
            out.extend(_interpolations(t, offset))
    return out


def _interpolations(t: Token, offset: int) -> list[Violation]:
    """`{…}` inside a string may be code (s!, m!, f! strings): lex it and apply the term rules."""
    out = []
    for part in interpolated_parts(t.text):
        try:
            inner = tokenize(part)
        except LexError:
            continue
        for v in _term_rules(inner, 0, set()):
            out.append(v.model_copy(update={"line": t.line + offset, "column": t.col}))
    return out


def _modifier_rules(c: Command, offset: int) -> list[Violation]:
    out = []
    for m in c.modifiers:
        allowed = ALLOWED_MODIFIERS.get(m)
        if allowed is None or (allowed != "any" and c.keyword != allowed):
            out.append(_v("modifier", c.tokens[0], f"`{m} {c.keyword}` is not allowed", offset))
    for attrs in c.attributes:
        out.extend(_attribute_rules(attrs, c.tokens[0], offset))
    return out


def _attribute_rules(inner: list[Token], at: Token, offset: int) -> list[Violation]:
    out = []
    entry: list[Token] = []
    depth = 0
    for t in [*inner, None]:
        if t is None or (depth == 0 and t.text == ","):
            words = [x for x in entry if x.kind is Tok.IDENT and x.text not in ("local", "scoped")]
            if words and words[0].text not in ALLOWED_ATTRIBUTES:
                out.append(_v("attribute", words[0], f"attribute `{words[0].text}`", offset))
            entry = []
            continue
        if t.text in "([{":
            depth += 1
        elif t.text in ")]}":
            depth -= 1
        entry.append(t)
    return out


def _open_rules(c: Command, offset: int) -> list[Violation]:
    """`open`, `namespace` and `export` of IO or Lean internals would alias forbidden names."""
    out = []
    for t in c.body:
        if t.kind is Tok.IDENT and FORBIDDEN_ROOTS.match(normalise_name(t.text)):
            out.append(
                _v("io", t, f"`{c.keyword} {t.text}` reaches IO or Lean's internals", offset)
            )
    return out


def _option_rules(c: Command, offset: int) -> list[Violation]:
    body = [t for t in c.body if t.text != "in"]
    opt = body[0].text if body else ""
    val = body[1].text if len(body) > 1 else ""
    if not ALLOWED_OPTION.match(opt):
        return [_v("set_option", c.tokens[0], f"option `{opt}` is not allowed", offset)]
    if opt in ("autoImplicit", "relaxedAutoImplicit") and val != "false":
        return [_v("set_option", c.tokens[0], f"`{opt}` must stay false", offset)]
    return []


def _command_rules(c: Command, offset: int, strict: Strictness) -> list[Violation]:
    kw = c.keyword
    out = _modifier_rules(c, offset)
    for p in c.prefixes:
        out.extend(_command_rules(p, offset, strict))
    if kw in FORBIDDEN_COMMANDS:
        relaxed_ok = strict is Strictness.RELAXED and kw in ("axiom", "example", "opaque")
        if not relaxed_ok:
            out.append(
                _v("command", c.tokens[c.keyword_index], f"`{kw}` {FORBIDDEN_COMMANDS[kw]}", offset)
            )
    elif kw in ("open", "namespace", "export"):
        out.extend(_open_rules(c, offset))
    elif kw == "set_option":
        out.extend(_option_rules(c, offset))
    elif kw == "attribute":
        if not c.body or c.body[0].text != "[":
            out.append(_v("attribute", c.tokens[0], "`attribute` needs `[…]`", offset))
        else:
            close = next((i for i, t in enumerate(c.body) if t.text == "]"), len(c.body))
            out.extend(_attribute_rules(c.body[1:close], c.tokens[0], offset))
    elif kw in ("omit", "include"):
        if not c.is_prefix:
            out.append(
                _v(
                    "command",
                    c.tokens[0],
                    f"`{kw}` only as `{kw} … in` before a declaration",
                    offset,
                )
            )
    elif kw in DEFINITION_KEYWORDS and c.body and c.body[0].kind is Tok.IDENT:
        out.extend(_definition_name_rules(c.body[0], offset))
    elif not (kw == "deriving" or kw in _ALLOWED_KEYWORDS):
        t = c.tokens[c.keyword_index]
        out.append(_v("command", t, f"`{t.text}` does not begin an allowed command", offset))
    return out


def _definition_name_rules(t: Token, offset: int) -> list[Violation]:
    """A context definition may not take a name Mathlib uses as notation (ℝ, ℕ, ℤ, ℚ, ℂ, …):
    the statement would then read as Mathlib's but mean the definition."""
    name = normalise_name(t.text)
    if any(0x2100 <= ord(ch) <= 0x214F for ch in name):
        return [_v("shadowing", t, f"a definition named `{name}` would shadow notation", offset)]
    return []


_ALLOWED_KEYWORDS = THEOREM_KEYWORDS | DEFINITION_KEYWORDS | SCOPE_KEYWORDS


def _proof_start(toks: list[Token]) -> int | None:
    """Index of the `:=` that begins the proof: the first at bracket depth 0 that does not
    belong to a `let`/`have`/`set`/`letI`/`haveI` inside the statement."""
    depth = 0
    pending = 0
    for j, t in enumerate(toks):
        if t.kind is Tok.SYMBOL and t.text in ("(", "[", "{", "⟨", "⦃", "@[", "‹"):
            depth += 1
        elif t.kind is Tok.SYMBOL and t.text in (")", "]", "}", "⟩", "⦄", "›"):
            depth = max(0, depth - 1)
        elif (
            depth == 0 and t.kind is Tok.IDENT and t.text in ("let", "letI", "have", "haveI", "set")
        ):
            pending += 1
        elif depth == 0 and t.kind is Tok.SYMBOL and t.text == ":=":
            if pending:
                pending -= 1
            else:
                return j
    return None


def _full_name(context: list[Command], declared: str) -> str:
    if declared.startswith("_root_."):
        return declared[len("_root_.") :]
    stack: list[str | None] = []
    for c in context:
        names = [t.text for t in c.body if t.kind is Tok.IDENT]
        if c.keyword == "namespace" and names:
            stack.append(normalise_name(names[0]))
        elif c.keyword == "section":
            stack.append(None)
        elif c.keyword == "end" and stack:
            stack.pop()
    parts = [p for p in stack if p]
    return ".".join([*parts, declared]) if parts else declared


def check_statement(
    body: str,
    *,
    name: str | None = None,
    header: str = "import Mathlib",
    allowed_imports: frozenset[str] | None = None,
    require_sorry: bool = True,
    strictness: Strictness | None = None,
    line_offset: int = 0,
    module_roots: frozenset[str] = DEFAULT_MODULE_ROOTS,
) -> HygieneReport:
    """Static hygiene of a body (the text after the header). Runs nothing.

    `strictness` defaults to STATEMENT (or PROOF with `require_sorry=False`). Lines in the
    report are those of the body plus `line_offset`.
    """
    strict = strictness or (Strictness.STATEMENT if require_sorry else Strictness.PROOF)
    v: list[Violation] = check_header(header, module_roots, allowed_imports)
    for line, what in suspicious_characters(body):
        v.append(Violation(rule="characters", line=line + line_offset, detail=what))
    try:
        toks = [t for t in tokenize(body) if t.kind is not Tok.DOC]
    except LexError as exc:
        v.append(Violation(rule="syntax", line=exc.line + line_offset, detail=exc.reason))
        return HygieneReport(ok=False, violations=v)
    if not toks:
        v.append(Violation(rule="empty", line=None, detail="there is no Lean code to check"))
        return HygieneReport(ok=False, violations=v)
    commands = split_commands(toks)
    theorems = [i for i, c in enumerate(commands) if c.keyword in THEOREM_KEYWORDS]
    allow_sorry: set[int] = set()
    theorem_name = full = None
    if strict is not Strictness.RELAXED:
        if len(theorems) != 1:
            v.append(
                Violation(
                    rule="one theorem",
                    line=None,
                    detail=f"expected exactly one theorem or lemma, found {len(theorems)}",
                )
            )
        else:
            ti = theorems[0]
            target = commands[ti]
            after = [c for c in commands[ti + 1 :] if c.keyword != "end"]
            for c in after:
                v.append(
                    _v(
                        "target last",
                        c.tokens[0],
                        "nothing but `end` may follow the theorem",
                        line_offset,
                    )
                )
            decl = target.body[0] if target.body else None
            if decl is None or decl.kind is not Tok.IDENT:
                v.append(_v("name", target.tokens[0], "the theorem has no name", line_offset))
            else:
                theorem_name = normalise_name(decl.text)
                full = _full_name(commands[:ti], decl.text.replace("«", "").replace("»", ""))
                if name is not None and name not in (theorem_name, full):
                    v.append(
                        _v(
                            "name",
                            decl,
                            f"theorem is named {theorem_name!r}, expected {name!r}",
                            line_offset,
                        )
                    )
            rest = target.body[1:]
            p = _proof_start(rest)
            if p is None:
                v.append(_v("proof", target.tokens[0], "no `:=` before a proof", line_offset))
            else:
                proof = rest[p + 1 :]
                words = [t.text for t in proof]
                if strict is Strictness.STATEMENT:
                    if words not in (["sorry"], ["by", "sorry"]):
                        shown = " ".join(words)[:60]
                        v.append(
                            _v(
                                "proof",
                                rest[p],
                                f"the proof must be `sorry`, found `{shown}`",
                                line_offset,
                            )
                        )
                    else:
                        idx0 = next(i for i, t in enumerate(toks) if t is proof[-1])
                        allow_sorry.add(idx0)
    for c in commands:
        v.extend(_command_rules(c, line_offset, strict))
    if strict is Strictness.RELAXED:
        allow_sorry = {i for i, t in enumerate(toks) if t.text in SORRY_WORDS}
    v.extend(_term_rules(toks, line_offset, allow_sorry))
    v.sort(key=lambda x: (x.line or 0, x.column or 0))
    return HygieneReport(ok=not v, violations=v, theorem_name=theorem_name, full_name=full)


def check_code(
    code: str,
    *,
    name: str | None = None,
    strictness: Strictness = Strictness.STATEMENT,
    module_roots: frozenset[str] = DEFAULT_MODULE_ROOTS,
) -> HygieneReport:
    """Hygiene of a whole item: header, then body, with lines of the original code."""
    sc = split_code(code)
    return check_statement(
        sc.body,
        name=name,
        header=sc.header,
        strictness=strictness,
        line_offset=sc.body_line - 1,
        module_roots=module_roots,
    )


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
