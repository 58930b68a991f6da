"""The name Lean generates for an anonymous instance, derived from source text with no toolchain.

`instance_base_name` is the name Lean generates for an anonymous instance, following Lean's
`Lean.Elab.Command.NameGen` (`mkBaseNameWithSuffix`): `inst`, then the parts of the class
expression in the order the generator visits it (a head before its explicit arguments, an infix
operator's constant before its operands: `X × Y` is `Prod X Y`, `E →L[𝕜] F` is
`ContinuousLinearMap (RingHom.id 𝕜) E F`, so `…ContinuousLinearMapId…`), each constant's last
part capitalised, each once, the current namespace's prefixes counting as already met; then
`Of…` for each of the instance's own binders that nothing after it depends on, outermost first
(`[Mul α] : SMul α α` is `instSMulOfMul`). From source text this is approximate: a constant is a
dotted or capitalised identifier not bound by the instance's binders and not a single capital
letter (with subscripts or primes); notation maps for the number systems and the arrows and
operators in `_INFIX`; an instance binder counts as depended on when its class is not
Prop-valued and its variables reappear under a head that takes instance arguments
(`class_signatures` reads both facts from the library's source); implicit arguments of
applications cannot be told from explicit ones, and lower-case constants (`id`) are missed. Lean
then appends `module_suffix` (`_mathlib_algebra_demo`) when no constant of the name comes from
the current project, or `_mathlib` when none comes from the current module: that step is
`lean_source`'s, which knows the declarations of each file.
"""

from __future__ import annotations

import re

from math2.importers.lean_names import binder_groups, lean_name, top_level_colon

_NOTATION = {
    "ℕ": "Nat",
    "ℤ": "Int",
    "ℚ": "Rat",
    "ℝ": "Real",
    "ℂ": "Complex",
    "ℝ≥0": "NNReal",
    "ℝ≥0∞": "ENNReal",
    "EReal": "EReal",
}
# Infix notation → (precedence, right-associative, the constants it unfolds to, in the order
# Lean's name generator meets them). Arrows with `[R]` hide `RingHom.id R` (`E →L[𝕜] F` is
# `ContinuousLinearMap (RingHom.id 𝕜) E F`, hence `…ContinuousLinearMapId…`).
_ID = "RingHom.id"
_INFIX: dict[str, tuple[int, bool, tuple[str, ...]]] = {
    "→L[": (25, True, ("ContinuousLinearMap", _ID)),
    "≃L[": (25, True, ("ContinuousLinearEquiv", _ID)),
    "→ₗ[": (25, True, ("LinearMap", _ID)),
    "≃ₗ[": (25, True, ("LinearEquiv", _ID)),
    "→ₗᵢ[": (25, True, ("LinearIsometry", _ID)),
    "≃ₗᵢ[": (25, True, ("LinearIsometryEquiv", _ID)),
    "→ₛₗ[": (25, True, ("LinearMap",)),
    "→ₐ[": (25, True, ("AlgHom",)),
    "→⋆ₐ[": (25, True, ("StarAlgHom",)),
    "≃⋆ₐ[": (25, True, ("StarAlgEquiv",)),
    "⟶": (10, True, ("Quiver.Hom",)),
    "⥤": (26, True, ("CategoryTheory.Functor",)),
    "≅": (10, False, ("CategoryTheory.Iso",)),
    "≌": (10, False, ("CategoryTheory.Equivalence",)),
    "≃ₐ[": (25, True, ("AlgEquiv",)),
    "→ᵃ[": (25, True, ("AffineMap",)),
    "→+*": (25, True, ("RingHom",)),
    "≃+*": (25, True, ("RingEquiv",)),
    "→ₙ+*": (25, True, ("NonUnitalRingHom",)),
    "→*₀": (25, True, ("MonoidWithZeroHom",)),
    "→*": (25, True, ("MonoidHom",)),
    "→+": (25, True, ("AddMonoidHom",)),
    "≃*": (25, True, ("MulEquiv",)),
    "≃+": (25, True, ("AddEquiv",)),
    "≃o": (25, True, ("OrderIso",)),
    "↪o": (25, True, ("OrderEmbedding",)),
    "→o": (25, True, ("OrderHom",)),
    "≃ᵢ": (25, True, ("IsometryEquiv",)),
    "→ᵇ": (25, True, ("BoundedContinuousFunction",)),
    "≃": (25, True, ("Equiv",)),
    "↪": (25, True, ("Function.Embedding",)),
    "→": (25, True, ("Forall",)),  # a function type: Lean writes `Forall`, not a constant
    "↔": (20, False, ("Iff",)),
    "∨": (30, True, ("Or",)),
    "∧": (35, True, ("And",)),
    "⊕": (30, True, ("Sum",)),
    "×": (35, True, ("Prod",)),
    "=": (50, False, ("Eq",)),
    "≠": (50, False, ("Ne",)),
    "<": (50, False, ("LT.lt",)),
    "≤": (50, False, ("LE.le",)),
    "∣": (50, False, ("Dvd.dvd",)),
    "∈": (50, False, ("Membership.mem",)),
    "⧸": (35, False, ("HasQuotient.Quotient",)),
    "+": (65, False, ("HAdd.hAdd",)),
    "-": (65, False, ("HSub.hSub",)),
    "*": (70, False, ("HMul.hMul",)),
    "/": (70, False, ("HDiv.hDiv",)),
    "•": (73, True, ("HSMul.hSMul",)),
    "^": (75, True, ("HPow.hPow",)),
}
# Postfix notation written onto an identifier (`Rᵐᵒᵖ` is `MulOpposite R`).
_POSTFIX = {"ᵐᵒᵖ": "MulOpposite", "ᵃᵒᵖ": "AddOpposite", "ᵒᵈ": "OrderDual", "ˣ": "Units"}
_SORTS = {"Type": "Type", "Type*": "Type", "Prop": "Prop", "Sort": "Sort", "Sort*": "Sort"}
_OPS = sorted(_INFIX, key=len, reverse=True)
_BINDERS = {"Σ": "Sigma", "Σ'": "PSigma", "∃": "Exists", "∃!": "ExistsUnique", "Π": "Forall"}
_LEX = re.compile(
    r"(?P<num>\d+)|(?P<binder>Σ'?(?=\s)|Π(?=\s)|∃!?)|(?P<ident>ℝ≥0∞|ℝ≥0|[ℕℤℚℝℂ]|«[^»]*»|[^\W\d][\w'!?₀-₉ₐ-ₜᵢ-ᵪ.]*\*?)"
    r"|(?P<open>[(\[{⟨⦃])|(?P<close>[)\]}⟩⦄])|(?P<op>"
    + "|".join(re.escape(o) for o in _OPS)
    + r")|(?P<neg>¬)|(?P<comma>,)|(?P<skip>\s+|.)"
)
_VARIABLE = re.compile(r"[A-Z][₀-₉']*")
_SUBSCRIPTS = re.compile(r"[₀-₉ₐ-ₜᵢ-ᵪ']")
# Core classes that are Prop-valued (Mathlib's own are read from its source: `class_table`).
CORE_PROP_CLASSES = frozenset(["Nonempty", "Subsingleton", "Fact", "Decidable", "IsEmpty"])


def _lex(text: str) -> list[tuple[str, str]]:
    out = []
    for m in _LEX.finditer(text):
        kind = m.lastgroup
        if kind != "skip":
            out.append((kind, m.group(0)))
    return out


class _Names:
    """What the name generator has met so far (Lean's `seen`): each constant once."""

    def __init__(
        self,
        bound: set[str],
        seen: set[str],
        head: str | None = None,
        postfix: dict[str, str] | None = None,
    ):
        self.bound = bound
        self.seen = seen
        self.postfix = {**_POSTFIX, **(postfix or {})}  # postfix notation → its constant
        self.head = head  # the class: a constant even when it is one capital letter (`A Nat`)
        self.used: list[str] = []  # constants that gave a part of the name
        self.unknown = False  # met an identifier that may be a lower-case constant

    def const(self, name: str) -> str:
        name = _NOTATION.get(name, name)
        if name in _SORTS:
            name = _SORTS[name]
            if name in self.seen:
                return ""
            self.seen.add(name)
            return name
        name = lean_name(name).strip(".")
        last = name.rsplit(".", 1)[-1]
        if name in self.bound or not last or (_VARIABLE.fullmatch(name) and name != self.head):
            return ""
        if "." not in name and not last[0].isupper():
            # a variable or a lower-case constant (`sphere`, `unitary`) we cannot tell apart
            self.unknown |= len(_SUBSCRIPTS.sub("", name)) > 1
            return ""
        if name in self.seen or name == "Forall":
            return "Forall" if name == "Forall" else ""
        self.seen.add(name)
        self.used.append(name)
        # Lean's `String.capitalize` changes ASCII letters only (`image.ι` gives `ι`, not `Ι`)
        return (last[0].upper() if last[0].isascii() else last[0]) + last[1:]


def _render(toks: list[tuple[str, str]], names: _Names) -> str:
    """The name parts of an expression, in the order Lean's generator visits it: a head, then
    its arguments; an infix operator's constants before its operands."""
    # split at the loosest infix operator outside brackets (the rightmost for a
    # right-associative one, else the leftmost)
    depth, best = 0, None
    for i, (kind, text) in enumerate(toks):
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        elif kind == "op" and depth == 0 and i > 0:
            prec, right, _ = _INFIX[text]
            if best is None or prec < best[1] or (prec == best[1] and not right):
                best = (i, prec)
    if best is not None:
        i = best[0]
        op = toks[i][1]
        rest = toks[i + 1 :]
        inner: list[tuple[str, str]] = []
        if op.endswith("["):  # the bracketed argument of `→L[𝕜]`
            depth = 1
            while rest and depth:
                kind, text = rest.pop(0)
                depth += (kind == "open") - (kind == "close")
                if depth:
                    inner.append((kind, text))
        head = "".join(names.const(c) for c in _INFIX[op][2])
        return head + _render(inner, names) + _render(toks[:i], names) + _render(rest, names)
    out = []
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        if kind == "open":
            depth, j = 1, i + 1
            while j < len(toks) and depth:
                depth += (toks[j][0] == "open") - (toks[j][0] == "close")
                j += 1
            if text in "([⟨":
                out.append(_render(toks[i + 1 : j - 1], names))
            i = j
            continue
        if kind == "ident":
            heads = []
            while fix := next((p for p in names.postfix if text.endswith(p) and text != p), None):
                heads.insert(0, names.postfix[fix])
                text = text[: -len(fix)]
            out += [names.const(h) for h in heads] + [names.const(text)]
        elif kind == "neg":
            out.append(names.const("Not"))
        elif kind == "binder":  # `Σ i, α i`: the constant, then the body after the comma
            out.append(names.const(_BINDERS[text]))
            comma = next((j for j in range(i + 1, len(toks)) if toks[j][1] == ","), None)
            if comma is not None:
                out.append(_render(toks[comma + 1 :], names))
                break
        i += 1
    return "".join(out)


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.']){re.escape(name)}(?![\w'])", text) is not None


def spell_notation(statement: str, notation: dict[str, str]) -> str:
    """The statement with each prefix or closed notation written as the constant it stands for
    (`IsAffine 𝔸(n; S)` → `IsAffine AlgebraicGeometry.AffineSpace (n; S)`, `CommRing (𝕎 R)` →
    `CommRing (WittVector R)`): Lean names an instance from the elaborated type, where notation
    is gone. `notation`: atom → constant (the library's table, `importers.lean_notation`)."""
    for atom in sorted((a for a in notation if a in statement), key=len, reverse=True):
        keep = atom[-1] if atom[-1] in "([{⟨" and len(atom) > 1 else ""
        statement = statement.replace(atom, f" {notation[atom]} {keep}")
    return statement


def instance_name(
    statement: str,
    namespace: list[str],
    classes: dict[str, tuple[bool, bool]] | None = None,
    notation: dict[str, str] | None = None,
    postfix: dict[str, str] | None = None,
) -> tuple[str, list[str], bool]:
    """The name Lean generates for an anonymous instance (without the module suffix), the
    constants that gave its parts, and whether it met an identifier that may be a lower-case
    constant; see `instance_base_name`. `notation`: the library's prefix notation, atom →
    constant (`spell_notation`); `postfix`: its postfix notation written onto an identifier
    (`Cᵒᵖ` is `Opposite C`), beside the hand-written `_POSTFIX`."""
    classes = classes or {}
    if notation:
        statement = spell_notation(statement, notation)
    colon = top_level_colon(statement)
    binders, target = (statement[:colon], statement[colon + 1 :]) if colon >= 0 else ("", statement)
    groups = binder_groups(binders)
    bound = {v for _, ns, _ in groups for v in ns}
    # the namespace's prefixes count as met (Lean: those that are constants)
    seen = {".".join(namespace[: i + 1]) for i in range(len(namespace))} | set(namespace[-1:])
    first = _lex(target)[:1]
    head = first[0][1] if first and first[0][0] == "ident" else None
    names = _Names(bound, seen, head, postfix)
    body = _render(_lex(target), names)
    ofs: list[str] = []
    for k in range(len(groups) - 1, -1, -1):  # Lean meets the innermost binder first
        bracket, ns, ty = groups[k]
        later = " ".join(g[2] for g in groups[k + 1 :]) + " " + target
        if ns and any(_mentions(later, n) for n in ns if n != "_"):
            continue  # a dependent binder: the rest mentions it
        if bracket == "[" and _instance_dependent(ty, groups[k + 1 :], target, classes):
            continue
        part = _render(_lex(ty), names)
        if part:
            ofs.insert(0, "Of" + part)
    return "inst" + body + "".join(ofs), names.used, names.unknown


def _head(ty: str) -> str:
    toks = _lex(ty)
    return toks[0][1].rsplit(".", 1)[-1] if toks and toks[0][0] == "ident" else ""


def _instance_dependent(
    ty: str, later: list[tuple[str, list[str], str]], target: str, classes
) -> bool:
    """Whether an instance binder `[C x …]` is used by what follows: a data-carrying class (not
    Prop-valued) whose variables reappear in a later binder or the target whose head takes
    instance arguments (its elaborated form then refers to this binder)."""
    prop, _ = classes.get(_head(ty), (_head(ty) in CORE_PROP_CLASSES, False))
    if prop:
        return False
    variables = [t for k, t in _lex(ty)[1:] if k == "ident" and "." not in t]
    for text in [g[2] for g in later] + [target]:
        heads = [t.rsplit(".", 1)[-1] for k, t in _lex(text) if k == "ident"]
        heads += [_INFIX[t][2][0].rsplit(".", 1)[-1] for k, t in _lex(text) if k == "op"]
        if any(classes.get(h, (False, False))[1] for h in heads) and any(
            _mentions(text, v) for v in variables
        ):
            return True
    return False


def instance_base_name(
    statement: str,
    namespace: list[str],
    classes: dict[str, tuple[bool, bool]] | None = None,
) -> str:
    """`inst…` for an anonymous instance whose source statement (binders, `:`, class) is
    given, declared inside `namespace` (see the module docstring for where it is approximate).
    `classes`: class or structure name → (Prop-valued, takes instance arguments)."""
    return instance_name(statement, namespace, classes)[0]
