"""Framing: what goes over the pipe, and how frames are split and parsed."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from math2.lean.protocol import (
    Command,
    CommandResponse,
    PickleEnvironment,
    ProofStep,
    ProofStepResponse,
    ReplError,
    UnpickleEnvironment,
    encode,
    parse_request,
    parse_response,
    split_frames,
)


@given(st.text())
def test_encoded_command_is_one_frame_whatever_the_text(cmd: str) -> None:
    raw = encode(Command(cmd=cmd, env=3)).decode("utf-8")
    assert raw.endswith("\n\n")
    assert "\n" not in raw[:-2]  # newlines in the source are escaped, never raw
    assert split_frames(raw) == [raw[:-2]]
    assert json.loads(raw) == {"cmd": cmd, "env": 3}


def test_aliases_and_omitted_fields() -> None:
    assert json.loads(encode(Command(cmd="x"))) == {"cmd": "x"}
    assert json.loads(encode(ProofStep(tactic="rfl", proof_state=2))) == {
        "tactic": "rfl",
        "proofState": 2,
    }
    assert json.loads(encode(PickleEnvironment(pickle_to="a.olean", env=0))) == {
        "pickleTo": "a.olean",
        "env": 0,
    }


def test_split_frames_tolerates_extra_blank_lines_and_missing_final_blank() -> None:
    text = '\n\n{"env": 0}\n\n\n\n{\n "env": 1\n}'
    assert [json.loads(f) for f in split_frames(text)] == [{"env": 0}, {"env": 1}]


def test_whitespace_only_lines_separate_frames() -> None:
    assert len(split_frames('{"env": 0}\n   \n{"env": 1}\n')) == 2


@pytest.mark.parametrize(
    ("obj", "cls"),
    [
        ({"env": 0}, CommandResponse),
        ({"message": "Unknown environment."}, ReplError),
        ({"proofStatus": "Completed", "proofState": 2, "goals": []}, ProofStepResponse),
        ({"proofState": 1, "goals": ["⊢ Nat"]}, ProofStepResponse),
        ({"messages": [], "env": 3}, CommandResponse),
    ],
)
def test_parse_response(obj, cls) -> None:
    assert isinstance(parse_response(obj), cls)


def test_parse_request_every_kind() -> None:
    assert isinstance(parse_request({"cmd": "x"}), Command)
    assert isinstance(parse_request({"tactic": "rfl", "proofState": 0}), ProofStep)
    assert isinstance(parse_request({"unpickleEnvFrom": "a"}), UnpickleEnvironment)
    with pytest.raises(ValueError, match="not a REPL request"):
        parse_request({"nonsense": 1})


def test_non_object_response_is_an_error() -> None:
    with pytest.raises(ValueError):
        parse_response([1, 2])  # type: ignore[arg-type]
