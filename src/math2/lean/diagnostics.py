"""Lean messages as typed diagnostics, tolerant to wording changes across Lean versions.

Lean has changed its wording over time (`unknown identifier 'x'` became ``Unknown identifier `x` ``,
`failed to synthesize instance` became `failed to synthesize`), so every pattern here is
case-insensitive and accepts either quote style.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

from math2.lean.names import QUOTED, quoted_name
from math2.lean.protocol import (
    CommandResponse,
    Message,
    Pos,
    ProofStepResponse,
    ReplError,
    Response,
)


class Kind(StrEnum):
    """What a diagnostic is about."""

    SORRY = "sorry"
    UNKNOWN_IDENTIFIER = "unknown_identifier"
    UNKNOWN_CONSTANT = "unknown_constant"
    UNKNOWN_NAMESPACE = "unknown_namespace"
    INVALID_FIELD = "invalid_field"
    UNKNOWN_TACTIC = "unknown_tactic"
    PARSE_ERROR = "parse_error"
    TYPE_MISMATCH = "type_mismatch"
    APP_TYPE_MISMATCH = "application_type_mismatch"
    TYPE_EXPECTED = "type_expected"
    SYNTH_INSTANCE = "failed_to_synthesize_instance"
    SYNTH_PLACEHOLDER = "failed_to_synthesize_placeholder"
    UNSOLVED_GOALS = "unsolved_goals"
    NO_GOALS = "no_goals"
    HEARTBEAT_TIMEOUT = "heartbeat_timeout"
    MAX_RECURSION = "max_recursion"
    TERMINATION = "termination"
    TACTIC_FAILED = "tactic_failed"
    REWRITE_FAILED = "rewrite_failed"  # `rw` found no instance of the pattern
    MOTIVE_NOT_TYPE_CORRECT = "motive_not_type_correct"  # `rw`/`simp` would make an ill-typed goal
    FUNCTION_EXPECTED = "function_expected"  # a term applied to arguments is not a function
    AMBIGUOUS = "ambiguous"
    ALREADY_DECLARED = "already_declared"
    KERNEL_ERROR = "kernel_error"
    DEPRECATED = "deprecated"
    LINTER = "linter"
    SUGGESTION = "suggestion"  # "Try this: …"
    OUTPUT = "output"  # #print, #check, trace and other info output
    REPL_UNKNOWN_ENV = "repl_unknown_environment"
    REPL_UNKNOWN_PROOF_STATE = "repl_unknown_proof_state"
    OTHER = "other"


class Diagnostic(BaseModel):
    """One classified message."""

    kind: Kind
    severity: str
    message: str
    identifier: str | None = None
    pos: Pos | None = None
    end_pos: Pos | None = None

    @property
    def is_error(self) -> bool:
        """Whether the message is an error (the check fails)."""
        return self.severity == "error"


# A quoted name: 'x', `x`, ‘x’ or «x», the name as Lean prints it (primes, «…» parts with
# spaces or dots: math2.lean.names).
_Q = QUOTED

# Ordered: the first pattern that matches decides. (kind, pattern)
_RULES: list[tuple[Kind, re.Pattern[str]]] = [
    # A suggestion first: "Try this: set_option maxHeartbeats N in" is advice, not a timeout.
    (Kind.SUGGESTION, re.compile(r"^\s*Try this", re.I)),
    (Kind.SORRY, re.compile(r"declaration uses ['`]sorry['`]", re.I)),
    (Kind.KERNEL_ERROR, re.compile(r"^\(kernel\)|kernel type check failed", re.I)),
    (Kind.UNKNOWN_IDENTIFIER, re.compile(rf"unknown identifier {_Q}", re.I)),
    (Kind.UNKNOWN_CONSTANT, re.compile(rf"unknown (?:constant|declaration) {_Q}", re.I)),
    (Kind.UNKNOWN_NAMESPACE, re.compile(rf"unknown namespace {_Q}", re.I)),
    (Kind.INVALID_FIELD, re.compile(rf"environment does not contain {_Q}", re.I)),
    (Kind.INVALID_FIELD, re.compile(rf"invalid field (?:notation, )?{_Q}", re.I)),
    (Kind.UNKNOWN_TACTIC, re.compile(r"unknown tactic", re.I)),
    (
        Kind.HEARTBEAT_TIMEOUT,
        re.compile(r"deterministic\)? timeout|maximum number of heartbeats", re.I),
    ),
    (Kind.MOTIVE_NOT_TYPE_CORRECT, re.compile(r"motive is not type correct", re.I)),
    (
        Kind.REWRITE_FAILED,
        re.compile(
            r"tactic ['`‘]?rewrite['`’]? failed|did not find (?:an )?instance of the pattern"
            r"|rewrite failed|equality or iff proof expected|pattern is a metavariable",
            re.I,
        ),
    ),
    (Kind.FUNCTION_EXPECTED, re.compile(r"function expected", re.I)),
    (Kind.MAX_RECURSION, re.compile(r"maximum recursion depth", re.I)),
    (Kind.SYNTH_PLACEHOLDER, re.compile(r"don't know how to synthesize", re.I)),
    (
        Kind.SYNTH_INSTANCE,
        re.compile(r"failed to synthesize(?: instance)?\s*(?:\n\s*)?(?P<id>[\w.]+)?", re.I),
    ),
    (Kind.APP_TYPE_MISMATCH, re.compile(r"application type mismatch", re.I)),
    (Kind.TYPE_MISMATCH, re.compile(r"type mismatch", re.I)),
    (Kind.TYPE_EXPECTED, re.compile(r"type expected", re.I)),
    (Kind.UNSOLVED_GOALS, re.compile(r"unsolved goals", re.I)),
    (Kind.NO_GOALS, re.compile(r"no goals( to be proved| to be solved)?", re.I)),
    (
        Kind.TERMINATION,
        re.compile(r"fail(ed)? to (show|prove) termination|structural recursion", re.I),
    ),
    (Kind.AMBIGUOUS, re.compile(r"ambiguous, possible interpretations|ambiguous identifier", re.I)),
    (Kind.ALREADY_DECLARED, re.compile(rf"{_Q} has already been declared|already declared", re.I)),
    (
        Kind.PARSE_ERROR,
        re.compile(
            r"^unexpected (token|identifier|end of input)|^expected |unterminated comment"
            r"|^invalid '?\w*'? ?syntax|^<input>:\d+:\d+:",
            re.I,
        ),
    ),
    (Kind.DEPRECATED, re.compile(rf"{_Q} (?:has been|is) deprecated", re.I)),
    (Kind.DEPRECATED, re.compile(r"(has been|is) deprecated", re.I)),
    (
        Kind.LINTER,
        re.compile(
            r"unused variable|is not explicitly referenced|linter\.|this tactic is never executed"
            r"|unnecessary `?(simp|have|seq)",
            re.I,
        ),
    ),
    (
        Kind.TACTIC_FAILED,
        re.compile(
            r"\w+ failed|could not (close|prove|unify)|made no progress|case tag .* not found"
            r"|failed to (prove|close)|omega could not",
            re.I,
        ),
    ),
]

_REPL_RULES = [
    (Kind.REPL_UNKNOWN_ENV, re.compile(r"^unknown environment", re.I)),
    (Kind.REPL_UNKNOWN_PROOF_STATE, re.compile(r"^unknown proof ?state", re.I)),
]


def classify_text(text: str, severity: str = "error") -> tuple[Kind, str | None]:
    """The kind of a message text and the identifier it names, if any."""
    for kind, pattern in _RULES:
        m = pattern.search(text)
        if m:
            return kind, quoted_name(m) or m.groupdict().get("id")
    if severity in ("info", "trace"):
        return Kind.OUTPUT, None
    return Kind.OTHER, None


def classify_message(msg: Message) -> Diagnostic:
    """A REPL message as a typed diagnostic."""
    kind, ident = classify_text(msg.data, msg.severity)
    return Diagnostic(
        kind=kind,
        severity=msg.severity,
        message=msg.data,
        identifier=ident,
        pos=msg.pos,
        end_pos=msg.end_pos,
    )


def classify_repl_error(err: ReplError) -> Diagnostic:
    """A REPL-level refusal (bad env id, bad proof state, or `Lean error:` wrapping a message)."""
    text = err.message
    for kind, pattern in _REPL_RULES:
        if pattern.search(text):
            return Diagnostic(kind=kind, severity="error", message=text)
    inner = text.split("\n", 1)[1] if text.startswith("Lean error:") and "\n" in text else text
    kind, ident = classify_text(inner, "error")
    return Diagnostic(kind=kind, severity="error", message=text, identifier=ident)


def diagnostics(response: Response) -> list[Diagnostic]:
    """Every diagnostic a response carries, including a failed proof status."""
    if isinstance(response, ReplError):
        return [classify_repl_error(response)]
    out = [classify_message(m) for m in response.messages]
    if isinstance(response, ProofStepResponse) and response.proof_status:
        status = response.proof_status
        if status.startswith("Error"):
            kind, ident = classify_text(status.removeprefix("Error: "), "error")
            out.append(Diagnostic(kind=kind, severity="error", message=status, identifier=ident))
        elif "contains sorry" in status:
            out.append(Diagnostic(kind=Kind.SORRY, severity="warning", message=status))
    return out


def errors(response: Response) -> list[Diagnostic]:
    """Only the error diagnostics."""
    return [d for d in diagnostics(response) if d.is_error]


def is_command(response: Response) -> bool:
    """Whether the response answers a command (not a tactic or an error)."""
    return isinstance(response, CommandResponse)
