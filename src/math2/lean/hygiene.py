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

from collections.abc import Sequence

from pydantic import BaseModel

from math2.lean.commands import Command, split_code, split_commands
from math2.lean.flags import benchmark_flags
from math2.lean.lexer import LexError, Tok, Token, tokenize
from math2.lean.library import LibraryTables
from math2.lean.limits import DEFAULT_LIMITS, Limits, operator_nesting, precheck
from math2.lean.names import same
from math2.lean.rules import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_MODIFIERS,
    DEFAULT_MODULE_ROOTS,
    DEFINITION_KEYWORDS,
    FORBIDDEN_COMMANDS,
    FORBIDDEN_ROOTS,
    SCOPE_KEYWORDS,
    SORRY_WORDS,
    THEOREM_KEYWORDS,
    normalise_name,
)
from math2.lean.syntax import suspicious_characters
from math2.lean.targets import (
    Strictness,
    _declared_names,
    _pick_targets,
    _target_rules,
    unlabelled_parts,
)
from math2.lean.terms import (
    Violation,
    _v,
    line_start_rules,
    option_refusal,
    over_ceiling,
    term_rules,
)
from math2.lean.trust import ContextTrust, generated_rules


class HygieneReport(BaseModel):
    """The static verdict on an item."""

    ok: bool
    violations: list[Violation]
    theorem_name: str | None = None  # as written
    full_name: str | None = None  # with the enclosing namespaces
    flags: list[Violation] = []  # what may change the meaning (benchmark context), not refused
    clamps: list[tuple[int, int, str]] = []  # (offset, length, value): options set to the ceiling
    targets: list[str] = []  # full names of the target theorems (several for a multi-part item)
    declared: list[str] = []  # full names of every named declaration of the item
    anonymous_target: bool = False  # a target is an anonymous instance (no name to ask about)

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
    why = option_refusal(opt, val)
    return [] if why is None else [_v("set_option", c.tokens[0], why, offset)]


def _command_rules(
    c: Command, offset: int, strict: Strictness, trust: ContextTrust
) -> list[Violation]:
    kw = c.keyword
    local_notation = (
        trust is ContextTrust.BENCHMARK and kw in LOCAL_NOTATION and c.modifiers == ["local"]
    )
    out = [] if local_notation else _modifier_rules(c, offset)
    for p in c.prefixes:
        out.extend(_command_rules(p, offset, strict, trust))
    if local_notation:
        pass  # a person's `local notation3`: its right-hand side passes the term rules
    elif kw in FORBIDDEN_COMMANDS:
        relaxed_ok = strict is Strictness.RELAXED and kw == "example"
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
# Notation a benchmark's context may define for itself (`local notation3 "ℝ²" => …`).
LOCAL_NOTATION = frozenset({"notation", "notation3"})


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
    trust: ContextTrust = ContextTrust.GENERATED,
    parts: Sequence[str] = (),
    allow_compiled: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    known_name: LibraryTables | None = None,
) -> HygieneReport:
    """Static hygiene of a body (the text after the header). Runs nothing.

    `strictness` defaults to STATEMENT (or PROOF with `require_sorry=False`). `trust` says who
    wrote the context (docs/lean.md: a model's block by default). `parts` names the targets of
    a multi-part item. `allow_compiled` accepts proofs that trust compiled code; only a caller
    may pass it. Lines in the report are those of the body plus `line_offset`.
    """
    strict = strictness or (Strictness.STATEMENT if require_sorry else Strictness.PROOF)
    v: list[Violation] = check_header(header, module_roots, allowed_imports)
    caps = precheck(body, limits)
    if caps:
        for cap in caps:
            v.append(cap.model_copy(update={"line": cap.line + line_offset}) if cap.line else cap)
        return HygieneReport(ok=False, violations=v)
    for line, col, what in suspicious_characters(body):
        v.append(Violation(rule="characters", line=line + line_offset, column=col, detail=what))
    try:
        toks = [t for t in tokenize(body) if t.kind is not Tok.DOC]
    except LexError as exc:
        v.append(
            Violation(
                rule="syntax", line=exc.line + line_offset, column=exc.column, detail=exc.reason
            )
        )
        return HygieneReport(ok=False, violations=v)
    if not toks:
        v.append(Violation(rule="empty", line=None, detail="there is no Lean code to check"))
        return HygieneReport(ok=False, violations=v)
    commands = split_commands(toks)
    for c in commands:  # operators nest too: `¬¬¬…` 80,000 deep has no bracket
        if nested := operator_nesting(c.tokens, limits):
            v.extend(x.model_copy(update={"line": (x.line or 0) + line_offset}) for x in nested)
            return HygieneReport(ok=False, violations=v)
    full_names = _declared_names(commands)
    allow_sorry: set[int] = set()
    unlabelled: list[Violation] = []
    theorem_name = full = None
    targets: list[int] = []
    if strict is not Strictness.RELAXED:
        targets, picked = _pick_targets(commands, full_names, name, parts, trust)
        v.extend(picked)
        unnamed = trust is ContextTrust.BENCHMARK and not parts and name is None
        more = unlabelled_parts(commands, targets) if unnamed else []
        if more:
            targets = more
            why = f"{len(more)} theorems each proved by `sorry` and no part names: all are parts"
            unlabelled.append(_v("unlabelled parts", commands[more[0]].tokens[0], why, line_offset))
        if targets:
            for c in commands[targets[-1] + 1 :]:
                if c.keyword != "end":
                    msg = "nothing but `end` may follow the theorem"
                    v.append(_v("target last", c.tokens[0], msg, line_offset))
        for ti in targets:
            tv, sorry_at, theorem_name = _target_rules(
                commands[ti], toks, name, strict, line_offset
            )
            v.extend(tv)
            if sorry_at is not None:
                allow_sorry.add(sorry_at)
        if targets and theorem_name is None and name is not None and not parts:
            at = commands[targets[-1]].tokens[0]
            detail = f"the target instance is anonymous, expected the name {name!r}"
            v.append(_v("name", at, detail, line_offset))
        if targets and theorem_name is not None:
            full = full_names.get(targets[-1])
            named_as = same(name, theorem_name) or same(name, full)
            if name is not None and not parts and not named_as:
                decl = commands[targets[-1]].body[0]
                detail = f"theorem is named {theorem_name!r}, expected {name!r}"
                v.append(_v("name", decl, detail, line_offset))
    for c in commands:
        v.extend(_command_rules(c, line_offset, strict, trust))
    v.extend(line_start_rules(commands, line_offset))
    flags: list[Violation] = []
    generated: list[Violation] = []
    if trust is ContextTrust.GENERATED and strict is not Strictness.RELAXED:
        generated = generated_rules(commands, set(targets), line_offset, known_name)
    else:
        flags = unlabelled + benchmark_flags(
            commands, set(targets), full_names, line_offset, known_name
        )
    if strict is Strictness.RELAXED:
        allow_sorry = {i for i, t in enumerate(toks) if t.text in SORRY_WORDS}
    notation_words = {
        (c.tokens[c.keyword_index].line + line_offset, c.tokens[c.keyword_index].col)
        for c in commands
        if trust is ContextTrust.BENCHMARK and c.keyword in LOCAL_NOTATION and c.modifiers
    }
    v.extend(
        x
        for x in term_rules(toks, line_offset, allow_sorry, allow_compiled=allow_compiled)
        if not (x.rule == "command" and (x.line, x.column) in notation_words)
    )
    clamps: list[tuple[int, int, str]] = []
    if trust is ContextTrust.BENCHMARK:  # a person's resource option over the ceiling: clamped
        clamped_at = set()
        for c in commands:
            for part in [*c.prefixes, c]:
                if part.keyword != "set_option":
                    continue
                words = [t for t in part.body if t.text != "in"]
                if len(words) < 2:
                    continue
                ceiling = over_ceiling(words[0].text, words[1].text)
                if ceiling is not None:
                    clamps.append((words[1].offset, len(words[1].text), str(ceiling)))
                    at = part.tokens[0]
                    clamped_at.add((at.line + line_offset, at.col))
                    why = f"`{words[0].text} {words[1].text}` is compiled as {ceiling:,}"
                    flags.append(_v("clamped", at, why, line_offset))
        v = [x for x in v if not (x.rule == "set_option" and (x.line, x.column) in clamped_at)]
    placed = {(x.line, x.column) for x in v}  # a place refused already needs no second rule
    v.extend(g for g in generated if (g.line, g.column) not in placed)
    v.sort(key=lambda x: (x.line or 0, x.column or 0))
    seen: set[tuple[str, int | None, int | None]] = set()
    unique = []
    for x in v:  # one violation per rule and place (a command word is seen by two rules)
        if (x.rule, x.line, x.column) not in seen or x.line is None:
            seen.add((x.rule, x.line, x.column))
            unique.append(x)
    return HygieneReport(
        ok=not unique,
        violations=unique,
        theorem_name=theorem_name,
        full_name=full,
        flags=flags,
        clamps=clamps,
        targets=[full_names[i] for i in targets if i in full_names],
        anonymous_target=any(i not in full_names for i in targets),
        declared=list(dict.fromkeys(full_names.values())),
    )


def check_code(
    code: str,
    *,
    name: str | None = None,
    strictness: Strictness = Strictness.STATEMENT,
    module_roots: frozenset[str] = DEFAULT_MODULE_ROOTS,
    trust: ContextTrust = ContextTrust.GENERATED,
    parts: Sequence[str] = (),
    allow_compiled: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    known_name: LibraryTables | None = None,
) -> HygieneReport:
    """Hygiene of a whole item: header, then body, with lines of the original code.
    `known_name` answers whether the pinned library declares a name (shadowing)."""
    caps = precheck(code, limits)  # before the header is split: the whole item is capped
    if caps:
        return HygieneReport(ok=False, violations=caps)
    sc = split_code(code)
    return check_statement(
        sc.body,
        name=name,
        header=sc.header,
        strictness=strictness,
        line_offset=sc.body_line - 1,
        module_roots=module_roots,
        trust=trust,
        parts=parts,
        allow_compiled=allow_compiled,
        limits=limits,
        known_name=known_name,
    )
