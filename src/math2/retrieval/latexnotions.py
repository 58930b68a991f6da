"""LaTeX notation for a notion, written as Mathlib writes that notion (issue 45 §2, branch
`latex46`): the second half of `latex.to_lean`.

Most LaTeX queries ask for a notion (`ZMod`, `Padic`, `Matrix.GeneralLinearGroup`), and a
mathematician writes its notation, not its name: `\\mathbb{Z}/n\\mathbb{Z}`, `\\mathbb{Q}_p`,
`GL_n(R)`, `R[x]`, `[G : H]`. Read symbol by symbol these are `ℤ/nℤ`, `ℚ p`, `GL n(R)`: no
symbol of Mathlib's notation table (`ℚ_[`, `ℤ√`, `⨁`) and no word of the notion's name, so no
part of the search reaches it. Here each such notation is written as a Lean user writes it —
Mathlib's own notation where it has a global one (`ℚ_[p]`, `ℤ_[p]`, `ℤ√d`), else the
notion's name applied (`ZMod n`, `Polynomial R`, `Matrix.GeneralLinearGroup (Fin n) R`,
`Subgroup.index H`) — so that the notation table, the name keys and the words meet it.

- `OPERATORS`: an operator's name as Mathlib names the operation (`\\operatorname{tr}` →
  `trace`, `\\mathrm{Var}` → `variance`; `\\operatorname{char}` stays `char`);
- `subscripted`: a blackboard letter with a subscript (`\\mathbb{Q}_p` → `ℚ_[p]` for a prime's
  letter p, q, ℓ; `\\mathbb{Z}_n` → `ZMod n`; `\\mathbb{F}_{p^n}` → `GaloisField p n`,
  `\\aleph_0` → `ℵ₀`);
- `NOTIONS`: patterns over the text `to_lean` wrote (`ℤ/nℤ` → `ZMod n`, `R[x]` → `Polynomial
  R` for a ring's letter, `A ^ ∘` → `interior A`).

`\\bigoplus` is written `⨁` (`latex.py`), whose Mathlib notation is scoped (`DirectSum`; the
global `⨁` is `CategoryTheory.Limits.biproduct`): the query reaches `DirectSum` by its name
keys. `SCOPED` is the one exception to "a scoped-only symbol names no namesake" (DESIGN.md):
`ℵ₀` and `𝓞` (only `\\mathcal{O}_K`, a field's letter subscripted; big-O is `O`), and through
`CONSTANTS` the φ/μ/Λ of an integer variable, name their notion, which the reading itself wrote.

The table was written after reading how the dev sets `users-latex` and `latex` are read and
missed (docs/benchmarks.md, branch `latex46`); each entry is the notation's usual meaning, not
one query's answer, but its gain on those sets includes that selection.
"""

from __future__ import annotations

import re

# `\\operatorname{X}`, `\\mathrm{X}`: the operator's Mathlib name (where it is not `X` itself).
OPERATORS = {
    "tr": "trace", "Tr": "trace", "Var": "variance", "Cov": "covariance", "ord": "orderOf",
    "rk": "rank", "Aut": "MulAut", "End": "Module.End", "Spec": "Spec PrimeSpectrum",
    "sgn": "sign", "supp": "support", "Frac": "FractionRing", "Cl": "ClassGroup",
    "Ann": "annihilator", "Stab": "stabilizer", "Sym": "Equiv.Perm",
}  # fmt: skip


def operator(name: str) -> str:
    """What an upright operator name stands for (`tr` → `trace`); any other text as it is."""
    return OPERATORS.get(name.strip(), name)


def subscripted(letter: str, sub: str) -> str | None:
    """A blackboard letter with its subscript, as Mathlib writes it; None where it is no
    notion (`ℝ_x` stays `ℝ x`). A p-adic `ℚ_[p]`/`ℤ_[p]` only for a prime's letter (p, q,
    ℓ): `\\mathbb{Z}_n`, `\\mathbb{Z}_6` are ℤ/nℤ; `\\mathbb{F}_q` (q a prime power) is no
    prime field."""
    sub = " ".join(sub.split())
    if letter == "ℵ" and sub == "0":
        return "ℵ₀"  # Mathlib's `Cardinal.aleph0`
    if letter in "ℚℤℂ" and sub in _PRIMES:
        return f"{letter}_[{sub}]"  # Mathlib's `ℚ_[p]`, `ℤ_[p]`, `ℂ_[p]`
    if letter == "ℤ" and re.fullmatch(r"[nmk]|\d+", sub):
        return f"ZMod {sub}"  # ℤ/nℤ
    if letter == "𝔽":
        power = re.fullmatch(r"\(?(\w+)\s*\^\s*\(?(\w+)\)?\)?", sub)
        if power:
            return f"GaloisField {power.group(1)} {power.group(2)}"
        if re.fullmatch(r"[pℓ]", sub):
            return f"ZMod {sub}"  # a prime field
        if sub.isdigit() and len(sub) <= 6:  # 𝔽₅ a prime field, 𝔽₄ = 𝔽_{2^2}, 𝔽₆ nothing
            return _finite_field(int(sub))
    return None


def _finite_field(q: int) -> str | None:
    """The finite field of `q` elements as Mathlib writes it: `ZMod p` for a prime,
    `GaloisField p n` for a prime power p^n (n > 1), None otherwise (review of main, M1)."""
    p = next((d for d in range(2, int(q**0.5) + 1) if q % d == 0), q) if q > 1 else 0
    if p < 2:
        return None
    n = 0
    while q % p == 0:
        q, n = q // p, n + 1
    if q != 1:
        return None
    return f"ZMod {p}" if n == 1 else f"GaloisField {p} {n}"


_PRIMES = ("p", "q", "ℓ")  # a prime's letters
# a ring's letter before a bracket (`R[x]`, `ℤ[i]`), not any capital (`M[i]` is an entry)
_RING = r"(?<!\w)([RSAKFkℤℚℝℂ𝔽])"
_VAR = r"[xytzXT]"  # a polynomial's indeterminate (not `i`, `j`, `n`: indices)
# an argument without space at either end: one way to split `GL(n,  R )` (was cubic)
_ARG = r"([^()\s](?:[^()]*[^()\s])?)"
NOTIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), s)
    for p, s in [
        (r"ℤ\s*/\s*\(?\s*(\w+)\s*\)?\s*ℤ", r"ZMod \1"),  # ℤ/nℤ, ℤ/(n)ℤ
        (r"ℤ\s*\[\s*i\s*\]", "GaussianInt"),  # Mathlib's (local) `ℤ[i]`
        (r"ℤ\s*\[\s*√\s*\(?\s*(-?\w+)\s*\)?\s*\]", r"ℤ√\1"),  # Mathlib's `ℤ√d`
        (_RING + r"\s*\[\[\s*" + _VAR + r"\s*\]\]", r"PowerSeries \1"),  # R[[x]]: `R⟦X⟧`
        (
            _RING + r"\s*\[\s*[a-z]\s*_?\s*1\s*,(?:[^\]]*[^\]\w])?[a-z]\s*_?\s*(\w+)\s*\]",
            r"MvPolynomial (Fin \2) \1",
        ),  # R[x_1, …, x_n]
        (_RING + r"\s*\[\s*" + _VAR + r"\s*\]", r"Polynomial \1"),  # R[x], `R[X]`
        (r"\bGL\s*\(\s*(\w+)\s*,\s*" + _ARG + r"\s*\)", r"Matrix.GeneralLinearGroup (Fin \1) \2"),
        (r"\bSL\s*\(\s*(\w+)\s*,\s*" + _ARG + r"\s*\)", r"Matrix.SpecialLinearGroup (Fin \1) \2"),
        (r"\bGL\s+(\w+)\s*\(\s*" + _ARG + r"\s*\)", r"Matrix.GeneralLinearGroup (Fin \1) \2"),
        (r"\bSL\s+(\w+)\s*\(\s*" + _ARG + r"\s*\)", r"Matrix.SpecialLinearGroup (Fin \1) \2"),
        (r"\[\s*([LEFK])\s*:\s*([KFℚℝ])\s*\]", r"Module.finrank \2 \1"),  # a field's degree
        (r"\[\s*([A-Z])\s*:\s*([A-Z])\s*\]", r"Subgroup.index \2"),  # a subgroup's index
        (r"(\w)\s*\^\s*∘", r"interior \1"),  # A^\circ
        (r"(?<!\w)L\s*\^\s*\(?([p-q12∞])\)?", r"MeasureTheory.Lp \1"),  # L^p
        (r"ℓ\s*\^\s*\(?([p-q12∞])\)?", r"lp \1"),  # ℓ^p
        # Hom_R(M, N), R a ring's letter (`Hom(G, H)` and a category's `Hom_𝒞` are no linear maps)
        (r"\bHom\s*([RSAKFkℤℚℝℂ])\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", r"\2 →ₗ[\1] \3"),
        # a number-theoretic function of an integer (`μ(n)`; `μ(X)` is a measure)
        (r"[φϕ]\s*\(\s*([nmkd])\s*\)", r"Nat.totient \1"),
        (r"μ\s*\(\s*([nmkd])\s*\)", r"ArithmeticFunction.moebius \1"),
        (r"Λ\s*\(\s*([nmkd])\s*\)", r"ArithmeticFunction.vonMangoldt \1"),
        (r"ζ\s*\(\s*([sz])\s*\)", r"riemannZeta \1"),
        (r"Γ\s*\(", r"Gamma ("),
        (r"(\w)\s*-\s*⌊\s*\1\s*⌋", r"Int.fract \1"),  # x - ⌊x⌋
    ]
]
# Readings that name no notion: `\\frac{d}{dx}` is `deriv`, `A^T` Mathlib's `Aᵀ`.
READINGS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), s)
    for p, s in [
        (r"\(\s*d\s*\)\s*/\s*\(\s*d\s*[a-z]\s*\)", "deriv"),
        (r"(?<!\w)([A-Z])\s*\^\s*(?:\(\s*[T⊤]\s*\)|[T⊤](?!\w))", r"\1ᵀ"),
        (r"𝓞(?!\s*[KLF](?!\w))", "O"),  # big-O: only `𝓞 K`, a field's, is its ring of integers
    ]
]
# Symbols the reading writes whose notation Mathlib scopes (so the notation table names
# nothing for them), and the notion each stands for.
SCOPED = {"ℵ₀": "Cardinal.aleph0", "𝓞": "NumberField.RingOfIntegers"}


def notions(text: str) -> str:
    """`to_lean`'s text with each notation of `NOTIONS` written as Mathlib writes it."""
    for rx, lean in (*NOTIONS, *READINGS):
        text = rx.sub(lean, text)
    return text


_IDENT = re.compile(r"[A-Za-z][\w']*(?:\.[A-Za-z][\w']*)*")


def _constants(texts: list[str]) -> frozenset[str]:
    """The names of notions among what the tables write (not `Fin`, the argument's type)."""
    return frozenset(n for t in texts for n in _IDENT.findall(t)
                     if ("." in n or n[0].isupper() or len(n) > 3) and n != "Fin")  # fmt: skip


# Every notion's name the tables write: a query that comes to name one names that notion
# (`named`), as a symbol of the notation table names its constant.
CONSTANTS = _constants(
    [lean for _, lean in NOTIONS]
    + ["ZMod", "GaloisField", "Subgroup.Normal"]
    + [v for v in OPERATORS.values() if v[0].isupper()]
)


def named(lean: str, query: str) -> list[str]:
    """The notions the reading `lean` of `query` names that the query does not write itself
    (`$\\mathbb{Z}/n\\mathbb{Z}$` → `ZMod`; `ZMod n` as typed is the user's own name)."""
    # the names typed, whole (`MvPolynomial` is not `Polynomial`), and their prefixes
    # (`ZMod.card` types `ZMod`); a command is no name (`\\Gamma` types no `Gamma`)
    idents = _IDENT.findall(re.sub(r"\\[A-Za-z]+", " ", query))
    typed = {".".join(p[:i]) for n in idents for p in [n.split(".")] for i in range(1, len(p) + 1)}
    out = [n for n in _IDENT.findall(lean) if n in CONSTANTS and n not in typed]
    out += [c for symbol, c in SCOPED.items() if symbol in lean and symbol not in query]
    return list(dict.fromkeys(out))
