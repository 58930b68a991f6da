"""LaTeX read as mathematics (issue 45 §2): a query's LaTeX parsed by pylatexenc and written
as Lean's notation with Mathlib's words, so that no LaTeX command ever reaches the index or a
query as a word.

    $\\sum_{i=0}^{n} i = \\frac{n(n+1)}{2}$   →   ∑ i ∈ Finset.range (n + 1), i = (n(n+1)) / (2)
    \\left( x \\right) \\cong \\mathbb{R}      →   ( x ) ≃ ℝ

`to_lean(text)` parses the text with `pylatexenc.latexwalker` (tolerant: unbalanced braces
are read as far as they go) and walks its nodes: the commands Mathlib writes differently from
LaTeX's own symbol are in `MACROS` (`\\cong` → `≃`, Mathlib's equivalence; `\\Rightarrow` →
`→`; `\\cdot` → `*`), the big operators take their limits (`\\sum_{i=0}^{n}` → `∑ i ∈
Finset.range (n + 1),`, `\\sum_{i=1}^{n}` → `∑ i ∈ Finset.Icc 1 n,`, `\\sum_{x \\in s}` → `∑ x ∈
s,`, `\\int_a^b` → `∫ x in a..b,`), `\\frac{a}{b}` is `(a) / (b)`, `\\binom{n}{k}` is
`Nat.choose (n) (k)`, `\\sqrt{x}` is `√(x)`, `\\mathbb{R}` is `ℝ`, and every other command is
what pylatexenc's `latex2text` makes of it — a symbol (`\\mu` → `μ`, `\\omega` → `ω`,
`\\hookrightarrow` → `↪`), the text of its argument (`\\mathrm{d}` → `d`,
`\\operatorname{rank}` → `rank`), an operator's name (`\\log` → `log`) or nothing (`\\left`,
`\\big`, `\\quad`, an unknown `\\foo`). A text without a LaTeX command or `$` is returned as
it is: Lean's `s \\ t` and `a % b` are not LaTeX.

A notion's notation is then written as Mathlib writes the notion (`latexnotions`: `\\mathbb{Q}_p`
→ `ℚ_[p]`, `\\mathbb{Z}/n\\mathbb{Z}` → `ZMod n`, `\\operatorname{tr}` → `trace`), and
`notion_constants` names the notions so written, which the namesakes read (`levers.py`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from math2.retrieval.latexnotions import named, notions, operator, subscripted

_LATEX_MARK = re.compile(r"\\[A-Za-z]|\$|\\[(\[]")
_STILL_LATEX = re.compile(r"\\[A-Za-z]")
# Commands Mathlib writes otherwise than latex2text's symbol (or that it drops).
MACROS = {
    "cong": "≃", "simeq": "≃", "Rightarrow": "→", "implies": "→", "Longrightarrow": "→",
    "Leftrightarrow": "↔", "iff": "↔", "Longleftrightarrow": "↔", "Leftarrow": "←",
    "cdot": "*", "times": "×", "ast": "*", "colon": ":", "vert": "|", "lvert": "|",
    "rvert": "|", "Vert": "‖", "lVert": "‖", "rVert": "‖", "|": "‖", "mid": "∣",
    "divides": "∣", "setminus": "\\", "emptyset": "∅", "varnothing": "∅", "deg": "degree",
    "lim": "Tendsto", "limsup": "limsup", "liminf": "liminf", "ne": "≠", "neq": "≠",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "subset": "⊂", "subseteq": "⊆",
    "to": "→", "rightarrow": "→", "mapsto": "↦", "circ": "∘", "{": "{", "}": "}",
    "lbrace": "{", "rbrace": "}", "langle": "⟨", "rangle": "⟩", "dots": " ", "ldots": " ",
    "cdots": " ", "infty": "∞", "bmod": "%", "pmod": "", "pi": "π", "choose": "choose",
    # operator names latex2text drops (issue 45, branch qual45f, after reading the misses of
    # `users-latex`: `$\\ker \\varphi$` was read as `φ`, `$\\dim_K V$` as `K V`): Mathlib's word
    "ker": "ker", "det": "det", "dim": "finrank", "gcd": "gcd", "lcm": "lcm", "hom": "Hom",
    "arg": "arg", "Im": "im", "Re": "re", "Pr": "ℙ", "triangle": "∆", "neg": "¬", "lnot": "¬",
    "land": "∧", "lor": "∨", "bot": "⊥",
    # a normal subgroup (issue 45, branch latex46): Mathlib's `⊴` is `SimpleGraph.IsIndContained`
    "unlhd": "Subgroup.Normal", "lhd": "Subgroup.Normal", "trianglelefteq": "Subgroup.Normal",
    "triangleleft": "Subgroup.Normal", "normal": "Subgroup.Normal",
}  # fmt: skip
_SCRIPT = re.compile(r"([_^])\s*(\\[A-Za-z]+|[^\s{\\])")
_PMOD = re.compile(r"\\pmod(?![A-Za-z])\s*(\\[A-Za-z]+|\w+)")
_UPRIGHT = frozenset({"operatorname", "mathrm", "text", "textrm", "mathsf", "rm", "textup"})
_SCRIPTED = "ℚℤℂ𝔽ℵ"  # letters whose subscript makes a notion (`latexnotions.subscripted`)
_BLACKBOARD = {"N": "ℕ", "Z": "ℤ", "Q": "ℚ", "R": "ℝ", "C": "ℂ"}
_BIG = {"sum": "∑", "prod": "∏", "bigcup": "⋃", "bigcap": "⋂", "coprod": "∐", "bigoplus": "⨁",
        "bigotimes": "⨂"}  # fmt: skip
_FRACS = frozenset({"frac", "dfrac", "tfrac", "cfrac"})
# What a command that takes arguments stands for when read alone (`commands_out`).
_ALONE = {**dict.fromkeys(_FRACS, "/"), "binom": "choose", "dbinom": "choose", "sqrt": "√"}
_ARITY = {**dict.fromkeys(_FRACS, 2), "binom": 2, "dbinom": 2, "tbinom": 2, "sqrt": 1, "pmod": 1,
          "operatorname": 1}  # fmt: skip


def has_latex(text: str) -> bool:
    """Whether the text holds a LaTeX command, a `$` or `\\(`/`\\[`."""
    return bool(_LATEX_MARK.search(text))


_COMMAND = re.compile(r"\\(?:mathbb|Bbb)\s*\{?\s*([A-Z])\s*\}?|\\([A-Za-z]+)")


def commands_out(text: str) -> str:
    """A document's prose (a docstring) with each LaTeX command replaced by what `to_lean`
    writes for it alone (`\\mathbb{R}` → `ℝ`, `\\le` → `≤`, `\\mathrm` → nothing), without
    parsing: the index reads 80,000 docstrings, a query one text."""
    if "\\" not in text:
        return text
    return _COMMAND.sub(_command, text)


def _command(m: re.Match[str]) -> str:
    if m.group(1):
        return _BLACKBOARD.get(m.group(1), m.group(1))
    return f" {_alone(m.group(2))} "


@functools.lru_cache(maxsize=4096)
def _alone(name: str) -> str:
    """What a command written alone stands for: `MACROS`, else latex2text's symbol or
    operator name, else nothing."""
    if name in MACROS:
        return MACROS[name]
    if name in _BIG:
        return _BIG[name]
    if name in _ALONE:
        return _ALONE[name]
    try:  # a command that wants arguments it does not have here fails in latex2text
        return str(_to_text().latex_to_text(f"\\{name}")).strip()
    except Exception:
        return ""


def to_lean(text: str) -> str:
    """The text with its LaTeX written as Lean notation and Mathlib words (see the module)."""
    if not has_latex(text):
        return text
    return _cached(text)


def notion_constants(text: str) -> list[str]:
    """The notions the text's LaTeX names through their notation (`latexnotions.named`:
    `$GL_n(R)$` → `Matrix.GeneralLinearGroup`), for the namesakes."""
    return named(to_lean(text), text) if has_latex(text) else []


@functools.lru_cache(maxsize=256)
def _cached(text: str) -> str:
    from pylatexenc.latexwalker import LatexWalker

    braced = _SCRIPT.sub(r"\1{\2}", text)  # `x_i`, `x^2`, `\\sum_i^n` → braced scripts
    braced = _PMOD.sub(r"\\pmod{\1}", braced)  # `\\pmod p` as `\\pmod{p}`
    try:
        nodes, _, _ = LatexWalker(braced, tolerant_parsing=True).get_latex_nodes()
    except Exception:  # pylatexenc's own errors: read the text with its commands dropped
        return re.sub(r"\\[A-Za-z]+", " ", text)
    try:
        # whitespace collapsed first: the notions' patterns then see one space at most
        return " ".join(notions(" ".join(_Walk().nodes(nodes or []).split())).split())
    except Exception:  # a command pylatexenc cannot render alone: as above
        return re.sub(r"\\[A-Za-z]+", " ", text)


@functools.cache
def _to_text() -> Any:
    import logging

    from pylatexenc.latex2text import LatexNodes2Text

    logging.getLogger("pylatexenc").setLevel(logging.ERROR)  # its warnings are ours to read

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


class _Walk:
    """One walk over pylatexenc's nodes, writing Lean."""

    def nodes(self, nodes: list[Any]) -> str:
        out: list[str] = []
        i = 0
        while i < len(nodes):
            node = nodes[i]
            kind = type(node).__name__
            if kind == "LatexMacroNode" and node.macroname in (*_BIG, "int"):
                lower, upper, i = _scripts(nodes, i + 1)
                out.append(self._big(node.macroname, lower, upper))
                continue
            if kind == "LatexCharsNode" and node.chars[-1:] in ("^", "_") and i + 1 < len(nodes):
                arg = self.node(nodes[i + 1]).strip()
                before = "".join(out).rstrip()
                notion = (subscripted(before[-1], arg) if node.chars == "_" and before
                          and before[-1] in _SCRIPTED else None)  # fmt: skip
                if notion is not None:  # `\\mathbb{Q}_p` → `ℚ_[p]`
                    out = [before[:-1], f" {notion} "]
                    i += 2
                    continue
                out.append(node.chars[:-1])  # `x^{n+1}` → `x ^ (n+1)`; `x_{i}` → `x i`
                one = re.fullmatch(r"\w+|\S", arg)
                out.append((f" ^ {arg}" if one else f" ^ ({arg})") if node.chars[-1] == "^"
                           else f" {arg}")  # fmt: skip
                i += 2
                continue
            wants = _ARITY.get(node.macroname, 0) if kind == "LatexMacroNode" else 0
            if wants and not (node.nodeargd and node.nodeargd.argnlist):
                # pylatexenc reads no arguments for this command: take the groups after it
                groups = nodes[i + 1 : i + 1 + wants]
                if len(groups) == wants and all(hasattr(g, "delimiters") for g in groups):
                    out.append(self.apply(node.macroname, groups))
                    i += 1 + wants
                    continue
            out.append(self.node(node))
            i += 1
        return "".join(out)

    def _big(self, name: str, lower: Any | None, upper: Any | None) -> str:
        lo = " ".join(self.node(lower).split()) if lower is not None else ""
        hi = " ".join(self.node(upper).split()) if upper is not None else ""
        if name == "int":
            return _integral(lo, hi)
        symbol = _BIG[name]
        var, _, start = lo.partition("=")
        var, start = var.strip(), start.strip()
        if var and hi in ("∞", "+∞", "+ ∞") and symbol in ("∑", "∏"):
            return f" {symbol}' {var}, "  # an infinite series or product: `tsum`, `tprod`
        if var and start and hi:
            if start == "0":
                return f" {symbol} {var} ∈ Finset.range ({hi} + 1), "
            return f" {symbol} {var} ∈ Finset.Icc {start} {hi}, "
        return f" {symbol} {lo}, " if lo else f" {symbol} "

    def node(self, node: Any) -> str:
        kind = type(node).__name__
        if kind == "LatexCharsNode":
            return str(node.chars)
        if kind in ("LatexMathNode", "LatexEnvironmentNode"):
            return f" {self.nodes(node.nodelist or [])} "
        if kind == "LatexGroupNode":
            inner = self.nodes(node.nodelist or [])
            left, right = node.delimiters
            return inner if left == "{" else f"{left}{inner}{right}"
        if kind == "LatexMacroNode":
            return self.macro(node)
        if kind == "LatexSpecialsNode":
            return " "
        return ""  # comments

    def macro(self, node: Any) -> str:
        name = node.macroname
        args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
        return self.apply(name, args, node)

    def apply(self, name: str, args: list[Any], node: Any = None) -> str:
        """A command `name` with its arguments' nodes (`node`: the command itself)."""
        if name in _FRACS and len(args) >= 2:
            return f" ({self.node(args[-2])}) / ({self.node(args[-1])}) "
        if name in ("binom", "dbinom", "tbinom") and len(args) >= 2:
            return f" Nat.choose ({self.node(args[-2])}) ({self.node(args[-1])}) "
        if name == "pmod" and args:
            return f" [MOD {self.node(args[-1]).strip()}] "
        if name == "sqrt" and args:
            return f" √({self.node(args[-1])}) "
        if name in ("mathbb", "Bbb") and args:
            inner = self.node(args[-1]).strip()
            if inner in _BLACKBOARD:
                return _BLACKBOARD[inner]
        if name in _UPRIGHT and args:  # an operator's name: Mathlib's (`\\operatorname{tr}`)
            return f" {operator(self.node(args[-1]))} "
        if name in ("mathcal", "mathscr") and args and self.node(args[-1]).strip() == "O":
            return "𝓞"  # Mathlib's ring of integers
        if name == "mathfrak" and args and re.fullmatch(r"[a-z]{2,}", self.node(args[-1])):
            return f" {self.node(args[-1])} "  # `\\mathfrak{sl}`: Mathlib's `sl`, `gl`
        if name in MACROS:
            return f" {MACROS[name]} "
        if node is None:
            return " ".join(self.node(a) for a in args)
        try:
            text = str(_to_text().nodelist_to_text([node]))
        except Exception:  # latex2text fails on some commands without their arguments (`\\title`)
            return " "
        if _STILL_LATEX.search(text) or (name.lower() in text.lower() and text.strip() != name):
            # a document's decoration, not mathematics: `<ref>`, `CHAPTER:`, `[NO \\title …]`
            return " "
        return f" {text} " if not text.isspace() else " "


def _integral(lo: str, hi: str) -> str:
    """`\\int` with its limits as Mathlib writes it: `∫ x in a..b,` between two bounds, `∫ x in
    Set.Ioi a,` up to ∞, `∫ x,` over the whole line, `∫ x in s,` over a set (`\\int_X`)."""
    lo, hi = lo.replace(" ", ""), hi.replace(" ", "")
    if lo in ("-∞", "−∞") and hi in ("∞", "+∞"):
        return " ∫ x, "
    if lo and hi in ("∞", "+∞"):
        return f" ∫ x in Set.Ioi {lo}, "
    if lo in ("-∞", "−∞") and hi:
        return f" ∫ x in Set.Iic {hi}, "
    if lo and not hi:
        return f" ∫ x in {lo}, "
    return f" ∫ x in {lo}..{hi}, " if lo or hi else " ∫ "


def _scripts(nodes: list[Any], i: int) -> tuple[Any | None, Any | None, int]:
    """The `_{…}` and `^{…}` after a big operator at `nodes[i:]` (scripts are braced before
    parsing): (lower, upper, the index after them)."""
    found: dict[str, Any] = {}
    while i + 1 < len(nodes) and type(nodes[i]).__name__ == "LatexCharsNode":
        mark = nodes[i].chars.strip()
        if mark not in ("_", "^") or mark in found:
            break
        found[mark] = nodes[i + 1]
        i += 2
    return found.get("_"), found.get("^"), i
