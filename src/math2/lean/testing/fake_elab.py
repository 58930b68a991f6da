"""The fake REPL's answers to math2's elaborated-type commands (`math2.lean.elaborated`).

A double, not Lean: it prints a declaration's signature as written, with what Lean's
elaboration would make visible under `pp.explicit`/`pp.instanceTypes` for the fragment it
models — an instance argument written explicitly (`@LT.lt ℕ ⟨…⟩ 5 3`, `(self := …)`,
`(⟨…⟩ : LT ℕ).lt`, `({ lt := … } : LT ℕ).lt`, an argument `by exact t`) is printed as the
ascription `(t : Class args)`, a type ascription written by the block is elaborated away
(`(2 : ℝ)` prints `2`), and `by` with a sorry word prints `sorryAx`. Notation stays as written
(a real Lean under those options prints none; math2 reads a double's answer knowing that).
Which constants are instances: `INSTANCES` below (a fixture written for math2: core instances
of the types the tests use), the `--library` entries marked `"instance": true`, and the
block's own `instance` declarations.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from math2.lean.brackets import depths
from math2.lean.lexer import LexError, Tok, Token, tokenize
from math2.lean.rules import SORRY_WORDS

# Class methods the double elaborates: binders (name, bracket, type template over the
# earlier binders' names).
SIGNATURES: dict[str, list[tuple[str, str, str]]] = {
    "LT.lt": [("α", "{", ""), ("self", "[", "LT α"), ("a", "(", ""), ("b", "(", "")],
    "LE.le": [("α", "{", ""), ("self", "[", "LE α"), ("a", "(", ""), ("b", "(", "")],
    "OfNat.ofNat": [("α", "{", ""), ("n", "(", ""), ("self", "[", "OfNat α n")],
    "HAdd.hAdd": [
        ("α", "{", ""), ("β", "{", ""), ("γ", "{", ""), ("self", "[", "HAdd α β γ"),
        ("a", "(", ""), ("b", "(", ""),
    ],
    "HMul.hMul": [
        ("α", "{", ""), ("β", "{", ""), ("γ", "{", ""), ("self", "[", "HMul α β γ"),
        ("a", "(", ""), ("b", "(", ""),
    ],
    "Dvd.dvd": [("α", "{", ""), ("self", "[", "Dvd α"), ("a", "(", ""), ("b", "(", "")],
    "Zero.zero": [("α", "{", ""), ("self", "[", "Zero α")],
}  # fmt: skip
INSTANCES = frozenset(
    {"instLTNat", "instLENat", "instOfNatNat", "instHAdd", "instHMul", "instAddNat",
     "instMulNat", "Nat.instDvdNat", "Real.instLT", "Real.instLE", "Real.instZero"}
)  # fmt: skip


def explicit_type(signature: str) -> str:
    """A declaration's type as the double prints it under math2's printing options."""
    try:
        toks = [t for t in tokenize(signature) if t.kind is not Tok.DOC]
    except LexError:
        return signature
    k = 0  # the signature's binders are its leading bracket groups, before a `:`
    while k < len(toks) and toks[k].text in ("(", "{", "[", "⦃"):
        k = _group(toks, k)
    colon = k if k < len(toks) and toks[k].text == ":" else None
    body = toks if colon is None else toks[colon + 1 :]
    text = _rewrite(signature, body)
    groups: list[str] = []
    k = 0
    while colon is not None and k < colon:  # the signature's binders, their types rewritten
        end = _group(toks, k)
        inside = toks[k + 1 : end - 1]
        cut = next((i for i, x in enumerate(inside) if x.text == ":"), None)
        if end - k > 1 and cut is not None:
            names = _text(signature, inside[:cut])
            typ = _rewrite(signature, inside[cut + 1 :])
            groups.append(f"{toks[k].text}{names} : {typ}{toks[end - 1].text}")
        else:
            groups.append(_text(signature, toks[k:end]))
        k = end
    return f"∀ {' '.join(groups)}, {text}" if groups else text


def used_instances(printed: str, extra: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The constants of a printed type that the double takes for instances."""
    try:
        toks = tokenize(printed)
    except LexError:
        return []
    known = INSTANCES | set(extra)
    return sorted({t.text for t in toks if t.kind is Tok.IDENT and t.text in known})


def _group(toks: list[Token], k: int) -> int:
    """The index after the atom starting at k (a bracketed group or one token)."""
    opens = {"(": ")", "⟨": "⟩", "{": "}", "[": "]"}
    if toks[k].text not in opens:
        return k + 1
    depth = 0
    for j in range(k, len(toks)):
        if toks[j].text in opens:
            depth += 1
        elif toks[j].text in opens.values():
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def _text(src: str, toks: list[Token]) -> str:
    if not toks:
        return ""
    return src[toks[0].offset : toks[-1].offset + len(toks[-1].text)]


def _inner(src: str, toks: list[Token]) -> str:
    """An argument's text with `by exact t` elaborated to `t` and a sorry-word tactic block to
    `sorryAx`."""
    t = toks[1:-1] if toks and toks[0].text == "(" and toks[-1].text == ")" else toks
    if t and t[0].text == "by":
        if any(x.text in SORRY_WORDS for x in t):
            return "sorryAx _ true"
        if len(t) > 2 and t[1].text == "exact":
            return _rewrite(src, t[2:])
    return _rewrite(src, toks)


def _rewrite(src: str, toks: list[Token]) -> str:
    out: list[str] = []
    k = 0
    binder_list = False
    while k < len(toks):
        t = toks[k]
        if t.text in ("∀", "∃", "fun", "λ", "∃!", "Σ", "Π"):
            binder_list = True
        elif t.text in (",", "=>", "↦"):
            binder_list = False
        if t.text == "@" and k + 1 < len(toks) and toks[k + 1].text in SIGNATURES:
            name = toks[k + 1].text
            args, j = [], k + 2
            for _ in SIGNATURES[name]:
                if j >= len(toks) or toks[j].text in (")", ",", ":", "⟩", "]", "}"):
                    break
                end = _group(toks, j)
                args.append(toks[j:end])
                j = end
            out.append(_applied(src, name, [_inner(src, a) for a in args]))
            k = j
            continue
        if t.text in SIGNATURES and k + 1 < len(toks) and toks[k + 1].text == "(":
            end = _group(toks, k + 1)
            inside = toks[k + 2 : end - 1]
            if len(inside) > 2 and inside[1].text == ":=" and inside[0].kind is Tok.IDENT:
                named = {inside[0].text: _inner(src, inside[2:])}
                out.append(_applied(src, t.text, [], named))
                k = end
                continue
        if t.text == "(" and not binder_list:
            end = _group(toks, k)
            inside = toks[k + 1 : end - 1]
            level = depths(inside)
            colon = next((i for i, x in enumerate(inside) if x.text == ":" and level[i] == 0), None)
            dot = toks[end : end + 2]
            if colon is not None and len(dot) == 2 and dot[0].text == ".":
                cls = inside[colon + 1 :]
                method = f"{cls[0].text}.{dot[1].text}" if cls else ""
                if method in SIGNATURES:
                    obj = _inner(src, inside[:colon])
                    out.append(f"@{method} {_rewrite(src, cls[1:])} ({obj} : {_text(src, cls)})")
                    k = end + 2
                    continue
            if colon is not None:  # a type ascription of the block: elaborated away
                out.append(f"({_inner(src, inside[:colon])})")
                k = end
                continue
            out.append(f"({_inner(src, inside)})")
            k = end
            continue
        if t.text == "by":
            out.append(_inner(src, toks[k:]))
            break
        out.append(t.text)
        k += 1
    return " ".join(out)


def _applied(src: str, name: str, args: list[str], named: dict[str, str] | None = None) -> str:
    """`@name a₁ … aₙ` with each instance argument as an ascription to its class."""
    named = named or {}
    subst: dict[str, str] = {}
    shown: list[str] = []
    for i, (bname, bracket, template) in enumerate(SIGNATURES[name]):
        value = args[i] if i < len(args) else named.get(bname, "_")
        if bracket == "[":
            cls = " ".join(subst.get(w, w) for w in template.split())
            shown.append(f"({value} : {cls})")
        else:
            shown.append(value if " " not in value else f"({value})")
        subst[bname] = value if " " not in value else f"({value})"
    return f"@{name} " + " ".join(shown)


_AUTO_BOUND = re.compile(r"^[A-Za-z][0-9₀-₉']*$")
_BINDING = frozenset(
    {"∀", "∃", "fun", "λ", "∃!", "Σ", "Π", "∑", "∏", "⋃", "⋂", "⨆", "⨅", "let", "have"}
)


def unbound_names(cmd: str, signature: str, known: Iterable[str]) -> list[str]:
    """The names of a signature that only `autoImplicit` would bind (a single letter, maybe
    with digits, subscripts or primes — the relaxed-off rule) and that nothing binds: the
    signature's binders, a binder notation, a `variable` of the command, a known constant.
    Under `set_option autoImplicit false` Lean answers each with an unknown identifier."""
    try:
        sig = [t for t in tokenize(signature) if t.kind is not Tok.DOC]
        whole = [t for t in tokenize(cmd) if t.kind is not Tok.DOC]
    except LexError:
        return []
    bound = set(known) | _binder_names(sig)
    for k, t in enumerate(whole):
        if t.text == "variable":
            bound |= _binder_names(whole[k + 1 :], until_command=True)
    out: list[str] = []
    for t in sig:
        free = t.kind is Tok.IDENT and _AUTO_BOUND.match(t.text) and t.text not in bound
        if free and t.text not in out:
            out.append(t.text)
    return out


def _binder_names(toks: list[Token], until_command: bool = False) -> set[str]:
    names: set[str] = set()
    k = 0
    while k < len(toks):
        t = toks[k]
        if until_command and t.col == 0 and k > 0:
            break
        if t.text in _BINDING or t.text in ("(", "{", "[", "⦃"):
            j = k + 1
            while j < len(toks) and toks[j].kind is Tok.IDENT:
                j += 1
            after = toks[j].text if j < len(toks) else ""
            if t.text in _BINDING or after in (":", "|", "∈") or (after == "," and t.text == "⦃"):
                names.update(x.text for x in toks[k + 1 : j])
        k += 1
    return names
