"""What the checker is asked and what it answers: the mode of a check, the status of its
outcome, the item (`CheckItem`) and the verdict with everything that led to it
(`CheckResult`). `math2.lean.checker` makes them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from math2.lean.diagnostics import Diagnostic
from math2.lean.terms import Violation
from math2.lean.trust import ContextTrust


class Mode(StrEnum):
    """What a check must show."""

    STATEMENT = "statement"
    PROOF = "proof"
    PLAIN = "plain"


class Status(StrEnum):
    """The outcome of one check."""

    OK = "ok"  # compiles, no sorry
    SORRY = "sorry"  # compiles, sorry only
    ERROR = "error"  # Lean reported errors
    REJECTED = "rejected"  # hygiene refused it before any compile
    TIMEOUT = "timeout"
    CRASH = "crash"
    REPL_ERROR = "repl_error"
    HEADER_ERROR = "header_error"
    BACKEND_ERROR = "backend_error"


class CheckItem(BaseModel):
    """One thing to check."""

    id: str
    code: str
    name: str | None = None
    mode: Mode = Mode.STATEMENT
    # Who wrote the context: a model (the strict default) or people (a benchmark's context).
    trust: ContextTrust = ContextTrust.GENERATED
    parts: list[str] = []  # the targets of a multi-part item, each its own theorem
    # Constants whose type the build should report (`#check @NAME` after the body): a binding's
    # type hash comes from the pinned build (K6.4). Names only; anything else is refused.
    show_types: list[str] = []


class CheckResult(BaseModel):
    """The verdict on one item, with everything that led to it."""

    id: str
    status: Status
    passed: bool
    reason: str
    diagnostics: list[Diagnostic] = []
    axioms: list[str] | None = None
    violations: list[Violation] = []
    time_s: float = 0.0
    cached: bool = False
    # What a benchmark's context does that may change the statement's meaning (not refusals).
    flags: list[Violation] = []
    backend: str = ""
    # The Lean that produced the verdict, as it reported itself (empty: nothing was compiled).
    compiled_by: str = ""
    # The types the build reported for `CheckItem.show_types`, as Lean pretty-printed them.
    types: dict[str, str] = {}
