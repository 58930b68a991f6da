"""Turning a model reply into Lean, and Lean's verdict or the judge's into feedback."""

from __future__ import annotations

import re

from pydantic import BaseModel

from math2.judging import JudgeVerdict
from math2.lean import CheckResult, Kind, Status

_FENCE = re.compile(r"```[ \t]*(?:lean4?|Lean4?)?[ \t]*\n(.*?)```", re.DOTALL)
_TAG = re.compile(r"<lean>(.*?)</lean>", re.DOTALL | re.IGNORECASE)
_OPEN_FENCE = re.compile(r"```[ \t]*(?:lean4?|Lean4?)?[ \t]*\n")
_THEOREM = re.compile(r"\b(?:theorem|lemma)\s+([^\s:({\[]+)")
# Kinds that mean "a name is wrong": worth another Mathlib search.
NAME_KINDS = {
    Kind.UNKNOWN_IDENTIFIER,
    Kind.UNKNOWN_CONSTANT,
    Kind.UNKNOWN_NAMESPACE,
    Kind.INVALID_FIELD,
}
MAX_DIAGNOSTICS = 8


NO_LEAN_BLOCK = "no Lean block"


class Extraction(BaseModel):
    """What was taken from a reply as Lean, and from where (recorded in the round)."""

    code: str | None = None
    source: str  # "fence" (a ``` block), "tag" (<lean>…</lean>), or NO_LEAN_BLOCK
    note: str = ""  # why nothing was taken
    dropped: list[str] = []  # import lines removed (the header is the trusted one)


def extract(reply: str) -> Extraction:
    """Code only from a fenced block (the last that states a theorem, else the last) or an
    explicit <lean> tag; prose is never taken for code, whatever words it contains."""
    blocks = _FENCE.findall(reply)
    source = "fence"
    if not blocks:
        blocks, source = _TAG.findall(reply), "tag"
    chosen = next((b for b in reversed(blocks) if _THEOREM.search(b)), None)
    if chosen is None and blocks:
        chosen = blocks[-1]
    if chosen is None or not chosen.strip():
        note = (
            "a ```lean block was opened but never closed (the reply was cut off)"
            if _OPEN_FENCE.search(reply)
            else "the reply has no ```lean block"
            if not blocks
            else "the ```lean block is empty"
        )
        return Extraction(source=NO_LEAN_BLOCK, note=note)
    kept, dropped = [], []
    for line in chosen.strip("\n").split("\n"):
        (dropped if line.strip().startswith("import ") else kept).append(line)
    code = "\n".join(kept).strip("\n")
    if not code:
        return Extraction(source=NO_LEAN_BLOCK, note="the block held only imports", dropped=dropped)
    return Extraction(code=code, source=source, dropped=dropped)


def extract_lean(reply: str) -> tuple[str | None, list[str]]:
    """(the Lean code of a reply, the import lines dropped from it); see `extract`."""
    e = extract(reply)
    return e.code, e.dropped


def theorem_name(code: str) -> str | None:
    """The name of the first theorem or lemma in the code."""
    m = _THEOREM.search(code)
    return m.group(1) if m else None


def compile_feedback(result: CheckResult) -> str:
    """Lean's verdict as the generator will read it: each diagnostic with kind and place."""
    if result.passed:
        return ""
    if result.status is Status.REJECTED:
        lines = ["The code was refused before compiling (math2's statement rules):"]
        for v in result.violations:
            where = f"line {v.line}: " if v.line else ""
            lines.append(f"- [{v.rule}] {where}{v.detail}")
        return "\n".join(lines)
    errors = [d for d in result.diagnostics if d.is_error]
    if not errors:
        return f"Lean did not accept it: {result.status.value}: {result.reason}"
    lines = ["Lean reported errors:"]
    for d in errors[:MAX_DIAGNOSTICS]:
        where = f"line {d.pos.line}, column {d.pos.column}: " if d.pos else ""
        ident = f" ({d.identifier})" if d.identifier else ""
        msg = "\n  ".join(d.message.strip().splitlines()[:4])
        lines.append(f"- {where}[{d.kind.value}{ident}] {msg}")
    if len(errors) > MAX_DIAGNOSTICS:
        lines.append(f"- … and {len(errors) - MAX_DIAGNOSTICS} more errors")
    return "\n".join(lines)


def names_unknown(result: CheckResult) -> list[str]:
    """The identifiers Lean did not know (a reason to search Mathlib again)."""
    return [d.identifier for d in result.diagnostics if d.kind in NAME_KINDS and d.identifier]


def judge_feedback(verdict: JudgeVerdict) -> str:
    """The judge's defects as the generator will read them."""
    if verdict.passed():
        return ""
    if not verdict.defects:
        return "The consistency judge found the statement inconsistent with the text."
    lines = ["The consistency judge found these defects:"]
    for d in verdict.defects:
        extra = f" — {d.explanation}" if d.explanation else ""
        lines.append(f"- {d.kind.value}: “{d.clause}”{extra}")
    return "\n".join(lines)
