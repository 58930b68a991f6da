"""The additive twins that Mathlib's `@[to_additive]` attribute generates, derived from source
text with no toolchain.

A declaration tagged `@[to_additive]` (about 16,000 in Mathlib) makes Lean add a second one:
`Finset.prod_range_succ` gets `Finset.sum_range_succ`, `mul_comm` gets `add_comm`. Those twins
exist in every Mathlib environment but in no source line, so a source scan must generate them.

- **Names** follow Mathlib's rule (`Mathlib/Tactic/Translate`): the last name part is split at
  `_` and at case changes, each word is looked up (lower-cased) in a dictionary (`mul` → `Add`,
  `prod` → `Sum`, `monoid` → `AddMonoid`, …) keeping the word's capitalisation, then a few
  multi-word abbreviations are fixed (`CommAdd` → `AddComm`, `zero_le` → `nonneg`, …). The
  namespace is translated only where one of its prefixes is itself a declaration with a twin
  (`Subgroup.mul_mem` → `AddSubgroup.add_mem`, `Finset.prod_comm` → `Finset.sum_comm`); Lean
  core's classes are known too. A name given in the attribute (`@[to_additive foo]`) replaces
  the last parts, as Lean does; `self` and `none` generate nothing, `existing` only names the
  twin (for namespaces). `attribute [to_additive …] A B` commands count like the attribute.
- **Docstrings** are the ones the attribute gives (`@[to_additive /-- … -/]` or `"…"`), else none.
- **Statements** are a textual translation, a search aid and not an elaborated type: operators
  (`*` → `+`, `/` → `-`, `∏` → `∑`, `•` → `+ᵥ`, `x⁻¹` → `-x`, `1` → `0` where it is not an
  exponent or next to `+`/`-`), and the identifiers that have a twin. `a ^ n` is left as it is
  (Lean turns it into `n • a`). Importers record that in the mention's `extra`.

The dictionaries are the data of Mathlib's `Translate/ToAdditive.lean` at the manifest's pin (a
subset: the entries that occur in Mathlib's names).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from math2.lean.lexer import LexError
from math2.lean.syntax import IDENT, mask

# word (lower-cased) -> replacement words (capitalised; lower-cased again to match the input)
NAME_WORDS: dict[str, tuple[str, ...]] = {
    "one": ("Zero",), "mul": ("Add",), "smul": ("VAdd",), "inv": ("Neg",), "div": ("Sub",),
    "sdiv": ("VSub",), "prod": ("Sum",), "hmul": ("HAdd",), "hsmul": ("HVAdd",),
    "hdiv": ("HSub",), "hpow": ("HSMul",), "finprod": ("Finsum",), "tprod": ("TSum",),
    "pow": ("NSMul",), "npow": ("NSMul",), "zpow": ("ZSMul",), "mabs": ("Abs",),
    "monoid": ("Add", "Monoid"), "submonoid": ("Add", "Submonoid"), "group": ("Add", "Group"),
    "subgroup": ("Add", "Subgroup"), "semigroup": ("Add", "Semigroup"),
    "torsor": ("Add", "Torsor"), "magma": ("Add", "Magma"), "haar": ("Add", "Haar"),
    "prehaar": ("Add", "Prehaar"), "unit": ("Add", "Unit"), "units": ("Add", "Units"),
    "cyclic": ("Add", "Cyclic"), "semigrp": ("Add", "Semigrp"), "grp": ("Add", "Grp"),
    "commute": ("Add", "Commute"), "semiconj": ("Add", "Semiconj"),
    "conjugates": ("Add", "Conjugates"), "conj": ("Add", "Conj"),
    "commutator": ("Add", "Commutator"), "rootable": ("Divisible",),
    "zpowers": ("ZMultiples",), "powers": ("Multiples",), "multipliable": ("Summable",),
    "gpfree": ("APFree",), "quantale": ("Add", "Quantale"), "square": ("Even",),
    "mconv": ("Conv",), "irreducible": ("Add", "Irreducible"),
    "mlconvolution": ("LConvolution",),
}  # fmt: skip
# joined words after translation (first letters lower-cased) -> their fixed form
ABBREVIATIONS: dict[str, str] = {
    "isCancelAdd": "IsCancelAdd", "isLeftCancelAdd": "IsLeftCancelAdd",
    "isRightCancelAdd": "IsRightCancelAdd", "cancelAdd": "AddCancel",
    "leftCancelAdd": "AddLeftCancel", "rightCancelAdd": "AddRightCancel",
    "cancelCommAdd": "AddCancelComm", "commAdd": "AddComm", "zero_le": "Nonneg",
    "zeroLE": "Nonneg", "zero_lt": "Pos", "zeroLT": "Pos", "lezero": "Nonpos",
    "le_zero": "Nonpos", "ltzero": "Neg", "lt_zero": "Neg", "addAntidiagonal": "Antidiagonal",
    "addSingle": "Single", "addSupport": "Support", "addTSupport": "TSupport",
    "addPointed": "Pointed", "addSpanning": "Spanning", "addIndicator": "Indicator",
    "isEven": "Even", "isRegular": "IsAddRegular", "isLeftRegular": "IsAddLeftRegular",
    "isRightRegular": "IsAddRightRegular", "hasFundamentalDomain": "HasAddFundamentalDomain",
    "quotientMeasure": "AddQuotientMeasure", "negFun": "InvFun", "uniqueProds": "UniqueSums",
    "orderOf": "AddOrderOf", "zeroLePart": "PosPart", "leZeroPart": "NegPart",
    "isScalarTower": "VAddAssocClass", "isOfFinOrder": "IsOfFinAddOrder",
    "isCentralScalar": "IsCentralVAdd", "function_addSemiconj": "Function_semiconj",
    "function_addCommute": "Function_commute", "divisionAddMonoid": "SubtractionMonoid",
    "subNegZeroAddMonoid": "SubNegZeroMonoid", "modularCharacter": "AddModularCharacter",
    "addShift": "Shift", "addSubshift": "Subshift",
    "isQuotientCoveringMap": "IsAddQuotientCoveringMap", "addExact": "Exact",
    "isMonHom": "IsAddMonHom", "mapMon": "MapAddMon", "monObj": "AddMonObj",
    "isModHom": "IsAddModHom", "mapMod": "MapAddMod", "modObj": "AddModObj",
    "yonedaMon": "YonedaAddMon", "conGen": "AddConGen", "unoneD": "unzeroD", "unone": "unzero",
}  # fmt: skip
# Lean core's multiplicative classes and their additive counterparts (declared outside Mathlib).
CORE: dict[str, str] = {
    "Mul": "Add", "One": "Zero", "Inv": "Neg", "Div": "Sub", "HMul": "HAdd", "HDiv": "HSub",
    "SMul": "VAdd", "HSMul": "HVAdd", "Pow": "SMul", "HPow": "HSMul",
}  # fmt: skip
# Words that end in capitals and stay one word (`LE`, `LT`, `WF`, `CoeTC`, …).
_END_CAPITAL = ("LE", "LT", "GE", "GT", "WF", "CoeTC", "CoeT", "CoeHTCT")


@dataclass(frozen=True, slots=True)
class ToAdditive:
    """What one `@[to_additive …]` attribute says."""

    target: str | None = None  # a name given in the attribute
    docstring: str | None = None
    generates: bool = True  # False for `self` and `none`: no translation at all
    existing: bool = False  # the twin is declared in source: a translation, nothing to generate


_LEADING = re.compile(r"to_additive\b")
_OPTION = re.compile(r"\(\s*\w+\s*:=")
_DOC = re.compile(r'/--(?P<doc>.*?)-/|"(?P<str>(?:[^"\\]|\\.)*)"', re.S)
_IDENT = re.compile(r"[^\s()\[\]{}\",/]+")


def split_attributes(text: str) -> list[str]:
    """The attributes of one `@[…]` body, split at its top-level commas (not inside brackets,
    strings or comments: the lexer's code view, `math2.lean.syntax.mask`)."""
    try:
        code = mask(text).code
    except LexError:  # a body cut short: read it as it stands
        code = text
    out, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c in "([{⟨":
            depth += 1
        elif c in ")]}⟩":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [a for a in out if a]


def parse_attribute(attr: str) -> ToAdditive | None:
    """`to_additive (attr := simp) foo /-- doc -/` → ToAdditive; None for other attributes."""
    m = _LEADING.match(attr)
    if m is None:
        return None
    rest = attr[m.end() :].strip()
    # options `(attr := …)`, `(reorder := …)`, `(dont_translate := …)`: balanced parentheses
    while _OPTION.match(rest):
        depth, i = 0, 0
        while i < len(rest):
            depth += (rest[i] == "(") - (rest[i] == ")")
            if depth == 0:
                break
            i += 1
        rest = rest[i + 1 :].strip()
    doc = None
    if dm := _DOC.search(rest):
        raw = dm.group("doc") if dm.group("doc") is not None else dm.group("str")
        doc = " ".join(raw.split()) if dm.group("doc") is not None else raw.strip()
        rest = rest[: dm.start()].strip()
    words = rest.replace(",", " ").split()
    if words and words[0] in ("self", "none"):
        return ToAdditive(generates=False)
    existing = bool(words) and words[0] == "existing"
    if existing:
        words = words[1:]
        if _OPTION.match(rest := " ".join(words)):  # `existing (attr := simp) foo`
            return replace(parse_attribute("to_additive " + rest) or ToAdditive(), existing=True)
    target = words[0] if words and _IDENT.fullmatch(words[0]) else None
    return ToAdditive(target=target, docstring=doc or None, existing=existing)


_ATTRIBUTE_CMD = re.compile(r"attribute\s*\[(?P<body>(?:[^\[\]]|\[[^\[\]]*\])*)\](?P<names>[^\n]*)")


def attribute_additive(
    text: str, m: re.Match[str], namespace: list[str], out: list[tuple[list[str], ToAdditive]]
) -> None:
    """From an `attribute [to_additive …] A B` command (a scanner event `m` over the blanked
    code, `text` the original), each target with its candidate full names (in the current
    namespace first, then as written)."""
    cm = _ATTRIBUTE_CMD.match(text, m.start("cmd"))
    if cm is None or "to_additive" not in cm.group("body"):
        return
    attr = next(
        (a for part in split_attributes(cm.group("body")) if (a := parse_attribute(part))), None
    )
    if attr is None:
        return
    for name in cm.group("names").split("--")[0].split():
        name = name.strip("«»")
        local = [".".join([*namespace, name])] if namespace else []
        out.append(([*local, name.removeprefix("_root_.")], attr))


def split_case(s: str) -> list[str]:
    """`InvHMulLE_ne` → ['Inv', 'HMul', 'LE', '_', 'ne']: split at `_` (kept) and before an
    upper-case letter that follows a lower-case one; `LE`, `LT`, … stay whole."""
    words: list[str] = []
    cur = ""
    i = 0
    while i < len(s):
        c = s[i]
        if c == "_":
            if cur:
                words.append(cur)
            words.append("_")
            cur, i = "", i + 1
            continue
        if cur and c.isupper() and not cur[-1].isupper():
            words.append(cur)
            cur = ""
        if c.isupper() and (end := next((e for e in _END_CAPITAL if s.startswith(e, i)), None)):
            nxt = i + len(end)
            if nxt == len(s) or not s[nxt].islower():
                if cur:
                    words.append(cur)
                words.append(end)
                cur, i = "", nxt
                continue
        cur += c
        i += 1
    if cur:
        words.append(cur)
    return words


def _like(model: str, word: str) -> str:
    """`word` with its leading capitals lower-cased when `model` starts in lower case
    (`mul` → `add`, `smul` → `vadd`, `Mul` → `Add`)."""
    return word if not model or model[0].isupper() else _decap(word)


def _decap(s: str) -> str:
    k = 0
    while k < len(s) and s[k].isupper():
        k += 1
    return s[:k].lower() + s[k:]


def guess_name(part: str) -> str:
    """The additive form of one name part (`prod_range_succ` → `sum_range_succ`), each piece
    between primes on its own as Mathlib's `guessName` maps them (`String.mapTokens '\''`):
    `map_one'` → `map_zero'`, `mul_eq_one'` → `add_eq_zero'`."""
    return "'".join(_guess_piece(piece) for piece in part.split("'"))


def _guess_piece(part: str) -> str:
    words: list[str] = []
    for w in split_case(part):
        repl = NAME_WORDS.get(w.lower())
        if repl is None:
            words.append(w)
        else:
            words += [_like(w, repl[0]), *repl[1:]]
    return _fix_abbreviations(words)


def _fix_abbreviations(words: list[str]) -> str:
    """From each word, the shortest run of words found in ABBREVIATIONS is replaced by its fixed
    form (lower-cased like the run); a run that starts in upper case stops at `_`."""
    out, i = [], 0
    while i < len(words):
        match = None
        for j in range(i + 1, len(words) + 1):
            joined = "".join(words[i:j])
            if words[j - 1] == "_" and joined[0].isupper():
                break  # `eventuallyLE_one` must not become `eventuallyNonpos`
            fixed = ABBREVIATIONS.get(_decap(joined))
            if fixed is not None:
                match = (j, fixed if joined[0].isupper() else _decap(fixed))
                break
        if match:
            out.append(match[1])
            i = match[0]
        else:
            out.append(words[i])
            i += 1
    return "".join(out)


def twin_name(name: str, attr: ToAdditive, translations: dict[str, str]) -> str | None:
    """The additive twin's full name, or None when the attribute generates nothing or the guess
    equals the source (Lean refuses that). `translations`: every known multiplicative → additive
    name, used for the namespace."""
    if not attr.generates:
        return None
    parts = name.split(".")
    namespace = _translate_namespace(parts[:-1], translations)
    if attr.target is None:
        out = [*namespace, guess_name(parts[-1])]
    elif attr.target.startswith("_root_."):
        out = attr.target.removeprefix("_root_.").split(".")
    else:
        given = attr.target.split(".")
        out = namespace[: max(0, len(namespace) - (len(given) - 1))] + given
    result = ".".join(out)
    return None if result == name else result


def _translate_namespace(parts: list[str], translations: dict[str, str]) -> list[str]:
    """The longest prefix of the namespace that has a known twin is replaced by that twin."""
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        tgt = translations.get(prefix) or CORE.get(prefix)
        if tgt:
            return tgt.split(".") + parts[k:]
    return parts


_STMT_TOKEN = re.compile(
    r"(?P<ident>"
    + IDENT.pattern
    + r")|(?P<one>(?<![\w.])1(?![\w.]))|(?P<op>∏ᶠ|∏|⁻¹|(?<!Type)(?<!Sort)\*|/|•)"
)
_OPS = {"∏ᶠ": "∑ᶠ", "∏": "∑", "*": "+", "/": "-", "•": "+ᵥ"}


def translate_statement(statement: str, translations: dict[str, str]) -> str:
    """A textual additive form of a statement (see the module docstring for what it leaves)."""

    def sub(m: re.Match[str]) -> str:
        if ident := m.group("ident"):
            return translations.get(ident) or CORE.get(ident) or ident
        if m.group("one"):
            before = statement[: m.start()].rstrip()[-1:]
            after = statement[m.end() :].lstrip()[:1]
            return "1" if before in ("+", "-", "^") or after in ("+", "-") else "0"
        op = m.group("op")
        return _OPS.get(op, op)

    out = _STMT_TOKEN.sub(sub, statement)
    # `x⁻¹` → `-x` for an identifier or a closing bracket's group
    return _negate(out)


def _negate(s: str) -> str:
    while (k := s.find("⁻¹")) >= 0:
        j = k
        if j and s[j - 1] in ")⟩]":
            close, open_ = s[j - 1], {")": "(", "⟩": "⟨", "]": "["}[s[j - 1]]
            depth, i = 0, j - 1
            while i >= 0:
                depth += s[i] == close
                depth -= s[i] == open_
                if depth == 0:
                    break
                i -= 1
            start = max(i, 0)
        else:
            start = j
            while start and (s[start - 1].isalnum() or s[start - 1] in "_'.₀₁₂₃₄₅₆₇₈₉"):
                start -= 1
        s = s[:start] + "-" + s[start:k] + s[k + 2 :]
    return s


def additive_twins(files: Iterable[Any]) -> list[Any]:
    """The twins of a scanned tree (`lean_source.SourceFile`s, all of them: a twin's namespace
    and an `attribute [to_additive] A` command may name declarations of other files). Fields
    of a tagged structure or class get twins too. Two passes name them: the first with only
    Lean core's classes known, so that the second can translate namespaces through the first's
    twins (`Subgroup` → `AddSubgroup` before `Subgroup.mul_mem`). The caller drops twins whose
    name a written declaration already has."""
    files = list(files)
    by_name: dict[str, Any] = {}
    for f in files:
        for d in f.declarations:
            kept = by_name.get(d.name) if d.name else None
            # the first of a name, or a public one after a private one (read_checkout's rule)
            if d.name and (kept is None or (kept.private and not d.private)):
                by_name[d.name] = d
    extra: dict[str, ToAdditive] = {}  # from attribute commands and owners (never mutating d)
    for f in files:
        for candidates, attr in f.additive_attributes:
            hit = next((c for c in candidates if c in by_name), None)
            if hit is not None and by_name[hit].additive is None:
                extra.setdefault(hit, attr)

    def attr_of(d: Any) -> ToAdditive | None:
        return d.additive or extra.get(d.name)

    for name, d in by_name.items():
        owner = by_name.get(name.rsplit(".", 1)[0]) if d.kind == "field" else None
        if owner is not None and attr_of(d) is None and (oa := attr_of(owner)) is not None:
            extra[name] = ToAdditive(existing=oa.existing, generates=oa.generates)
    tagged = [(d, a) for d in by_name.values() if (a := attr_of(d)) is not None and a.generates]
    translations: dict[str, str] = {}
    for _ in range(2):
        translations = {d.name: t for d, a in tagged if (t := twin_name(d.name, a, translations))}
    twins = []
    for d, a in tagged:
        tgt = translations.get(d.name)
        if tgt is None or a.existing:
            continue
        twins.append(
            replace(
                d,
                name=tgt,
                statement=translate_statement(d.statement, translations),
                docstring=a.docstring,
                attributes=[],
                successor=translations.get(d.successor or "", d.successor),
                stacks=[],
                generated=True,
                additive=None,
                twin_of=d.name,
            )
        )
    return twins
