"""Lints on hypotheses and goal: unused hypothesis, restated conclusion, trivial goal."""

from __future__ import annotations

from math2.checks.base import register
from math2.checks.lints.common import (
    NEG,
    Lint,
    false_comparison,
    key,
    norm_relation,
    relation,
    split_top,
)
from math2.checks.statement import Statement, names_in, strip_parens, texts, top_level
from math2.lean.lexer import Tok, Token


@register("lint.unused_hypothesis")
class UnusedHypothesis(Lint):
    declared_status = "fail"  # before it was measured it failed pairs

    def judge(self, st: Statement, informal: str) -> list[str]:
        variables = set(st.variables) | _auto_bound(st)
        relevant = names_in(st.goal) & variables
        hyps = [(n, b, names_in(b.type) & variables) for n, b in st.hypotheses]
        # a variable whose type mentions others (R : ι → V, S : Set V) ties them together
        hyps += [("", b, ({v} | names_in(b.type)) & variables) for v, b in st.variables.items()]
        hyps += [("", b, names_in(b.type) & variables) for b in st.binders if b.is_instance]
        # hypotheses that tie a variable to a relevant one make it relevant (fixpoint)
        changed = True
        while changed:
            changed = False
            for _, _, vs in hyps:
                if vs & relevant and not vs <= relevant:
                    relevant |= vs
                    changed = True
        out = []
        for name, b, vs in hyps:
            if not name:
                continue
            if not vs:
                if not (names_in(b.type) & _declared_elsewhere(st)):
                    out.append(f"{name} : {' '.join(texts(b.type))} mentions no variable")
            elif not vs & relevant:
                out.append(f"{name} : {' '.join(texts(b.type))} shares no variable with the goal")
        return out


def _auto_bound(st: Statement) -> set[str]:
    """Undeclared one-letter names in the binders (Lean's auto-bound implicits: `p.Prime`)."""
    declared = {n for b in st.binders for n in b.names}
    out = set()
    for b in st.binders:
        for t in b.type:
            head = t.text.split(".")[0]
            core = head.rstrip("₀₁₂₃₄₅₆₇₈₉'")
            if (
                t.kind is Tok.IDENT
                and len(core) == 1
                and not 0x2100 <= ord(core) <= 0x214F
                and head not in declared
                and not _bound_in(b.type, head)
            ):
                out.add(head)
    return out


def _bound_in(toks: list[Token], name: str) -> bool:
    """Whether `name` is bound inside the expression (∀ x, ∃ x, fun x, λ x, {x | …})."""
    for k, t in enumerate(toks):
        if t.text in {"∀", "∃", "∃!", "fun", "λ", "{", "∑", "∏", "⋃", "⋂"}:
            for u in toks[k + 1 : k + 6]:
                if u.text in {",", "=>", "↦", "|", ":", "in", "∈"}:
                    break
                if u.text == name:
                    return True
    return False


def _declared_elsewhere(st: Statement) -> set[str]:
    """Names bound by instance binders (a hypothesis about a type class parameter)."""
    out: set[str] = set()
    for b in st.binders:
        if b.is_instance:
            out |= names_in(b.type)
    return out


@register("lint.restated_conclusion")
class RestatedConclusion(Lint):
    declared_status = "fail"  # before it was measured it failed pairs

    def judge(self, st: Statement, informal: str) -> list[str]:
        goal = key(st.goal)
        out = []
        for name, b in st.hypotheses:
            t = strip_parens(b.type)
            parts = [t] + [strip_parens(p) for p in split_top(t, "∧") if len(top_level(t, {"∧"}))]
            if any(key(p) == goal for p in parts):
                out.append(f"{name} : {' '.join(texts(b.type))} is the goal")
        return out


@register("lint.trivial_goal")
class TrivialGoal(Lint):
    declared_status = "fail"  # before it was measured it failed pairs

    def judge(self, st: Statement, informal: str) -> list[str]:
        out = []
        goal = strip_parens(st.goal)
        if texts(goal) == ["True"]:
            out.append("the goal is True")
        rel = relation(goal)
        if rel and rel[0] == rel[2] and rel[1] in {"=", "↔", "≤", "≥", "<=", ">="}:
            out.append(f"the goal `{rel[0]} {rel[1]} {rel[2]}` holds by reflexivity")
        facts: dict[tuple[str, str, str], str] = {}
        props: dict[str, str] = {}
        for name, b in st.hypotheses:
            t = strip_parens(b.type)
            k = key(t)
            if k == "False":
                out.append(f"{name} : False")
            props[k] = name
            r = relation(t)
            if r is None:
                continue
            a, op, c = norm_relation(r)
            if (a == c and op in {"<", "≠"}) or false_comparison(a, op, c):
                out.append(f"{name} : {k} is false")
            facts[(a, op, c)] = name
        for prop, name in props.items():
            if prop.startswith("¬ "):
                other = props.get(prop[2:].strip()) or props.get(_unparen(prop[2:].strip()))
                if other:
                    out.append(f"{name} and {other} contradict (P and ¬P)")
        for (a, op, c), name in facts.items():
            for neg in _contradictions(a, op, c):
                if neg in facts and facts[neg] != name and (a, op, c) < neg:
                    out.append(f"{name} and {facts[neg]} contradict ({a} {op} {c})")
        return out


def _unparen(s: str) -> str:
    return s[2:-2] if s.startswith("( ") and s.endswith(" )") else s


def _contradictions(a: str, op: str, c: str) -> list[tuple[str, str, str]]:
    """Normalised relations that contradict `a op c`."""
    out = []
    if op in NEG:
        out.append(norm_relation((a, NEG[op], c)))
    if op == "<":
        out += [norm_relation((c, "<", a)), norm_relation((c, "≤", a)), (a, "=", c), (c, "=", a)]
    if op == "=":
        out.append((c, "≠", a))
    return out
