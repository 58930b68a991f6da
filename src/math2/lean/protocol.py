"""The Lean REPL protocol (leanprover-community/repl) as typed messages.

A request is one JSON object followed by a blank line; the REPL answers with one JSON object
(pretty-printed over several lines) followed by a blank line. JSON strings escape newlines, so a
blank line never occurs inside a frame.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Msg(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)


# ---- requests -------------------------------------------------------------------------------


class Command(_Msg):
    """Elaborate Lean source, optionally in an earlier environment."""

    cmd: str
    env: int | None = None
    all_tactics: bool | None = Field(None, alias="allTactics")
    root_goals: bool | None = Field(None, alias="rootGoals")
    infotree: str | None = None


class FileCommand(_Msg):
    """Elaborate a file on the REPL's side."""

    path: str
    all_tactics: bool | None = Field(None, alias="allTactics")


class ProofStep(_Msg):
    """Run a tactic in a proof state."""

    tactic: str
    proof_state: int = Field(alias="proofState")


class PickleEnvironment(_Msg):
    """Write an environment to an .olean file."""

    pickle_to: str = Field(alias="pickleTo")
    env: int


class UnpickleEnvironment(_Msg):
    """Read an environment back from an .olean file."""

    unpickle_env_from: str = Field(alias="unpickleEnvFrom")


class PickleProofState(_Msg):
    """Write a proof state to a file."""

    pickle_to: str = Field(alias="pickleTo")
    proof_state: int = Field(alias="proofState")


class UnpickleProofState(_Msg):
    """Read a proof state back, optionally into an environment."""

    unpickle_proof_state_from: str = Field(alias="unpickleProofStateFrom")
    env: int | None = None


Request = (
    Command
    | FileCommand
    | ProofStep
    | PickleEnvironment
    | UnpickleEnvironment
    | PickleProofState
    | UnpickleProofState
)


def encode(request: Request) -> bytes:
    """One frame: compact JSON (no raw newlines) and the blank line that ends it."""
    body = request.model_dump(by_alias=True, exclude_none=True)
    return (json.dumps(body, ensure_ascii=False) + "\n\n").encode("utf-8")


def parse_request(obj: dict[str, Any]) -> Request:
    """The typed request for a decoded JSON object (as a fake REPL or a transcript sees it)."""
    if "cmd" in obj:
        return Command.model_validate(obj)
    if "tactic" in obj:
        return ProofStep.model_validate(obj)
    if "path" in obj:
        return FileCommand.model_validate(obj)
    if "unpickleEnvFrom" in obj:
        return UnpickleEnvironment.model_validate(obj)
    if "unpickleProofStateFrom" in obj:
        return UnpickleProofState.model_validate(obj)
    if "pickleTo" in obj and "proofState" in obj:
        return PickleProofState.model_validate(obj)
    if "pickleTo" in obj:
        return PickleEnvironment.model_validate(obj)
    raise ValueError(f"not a REPL request: keys {sorted(obj)}")


# ---- responses ------------------------------------------------------------------------------


class Pos(_Msg):
    """A position in the submitted text (line from 1, column from 0)."""

    line: int
    column: int


class Message(_Msg):
    """A message of the Lean frontend."""

    severity: Literal["trace", "info", "warning", "error"]
    pos: Pos
    end_pos: Pos | None = Field(None, alias="endPos")
    data: str


class Sorry(_Msg):
    """A `sorry` in the submitted text, with the goal and a proof state to continue from."""

    pos: Pos | None = None
    end_pos: Pos | None = Field(None, alias="endPos")
    goal: str
    proof_state: int | None = Field(None, alias="proofState")


class Tactic(_Msg):
    """A tactic the REPL reports with `allTactics`."""

    tactic: str
    goals: str
    pos: Pos
    end_pos: Pos | None = Field(None, alias="endPos")
    proof_state: int | None = Field(None, alias="proofState")
    used_constants: list[str] = Field(default_factory=list, alias="usedConstants")


class CommandResponse(_Msg):
    """The answer to a command (or file, pickle, unpickle): a new environment id and messages."""

    env: int | None = None
    messages: list[Message] = Field(default_factory=list)
    sorries: list[Sorry] = Field(default_factory=list)
    tactics: list[Tactic] = Field(default_factory=list)
    infotree: Any = None

    @property
    def errors(self) -> list[Message]:
        """Messages of severity error."""
        return [m for m in self.messages if m.severity == "error"]


class ProofStepResponse(_Msg):
    """The answer to a tactic: the new proof state and its goals."""

    proof_state: int = Field(alias="proofState")
    goals: list[str] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    sorries: list[Sorry] = Field(default_factory=list)
    traces: list[str] = Field(default_factory=list)
    proof_status: str | None = Field(None, alias="proofStatus")


class ReplError(_Msg):
    """The REPL refused the request (unknown env, unknown proof state, a Lean error, …)."""

    message: str


Response = CommandResponse | ProofStepResponse | ReplError


def parse_response(obj: dict[str, Any]) -> Response:
    """The typed response for a decoded JSON object."""
    if not isinstance(obj, dict):
        raise ValueError(f"a REPL response must be a JSON object, got {type(obj).__name__}")
    if "message" in obj and "env" not in obj and "proofState" not in obj:
        return ReplError.model_validate(obj)
    if "proofState" in obj and ("goals" in obj or "proofStatus" in obj):
        return ProofStepResponse.model_validate(obj)
    return CommandResponse.model_validate(obj)


def decode_frame(frame: str) -> Response:
    """Parse one output frame (the text between blank lines)."""
    return parse_response(json.loads(frame))


def split_frames(text: str) -> list[str]:
    """Split a whole stream into its frames (for transcripts and tests)."""
    frames: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            frames.append("\n".join(current))
            current = []
    if current:
        frames.append("\n".join(current))
    return frames
