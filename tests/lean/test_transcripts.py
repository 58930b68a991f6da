"""Every REPL transcript parses, and every message classifies to a sensible kind: the frames
written for math2 (tests/fixtures/repl) always, every real transcript of the REPL's own test
suite in the conformance group (data set `lean-repl-transcripts`, marker `data`)."""

import json
from pathlib import Path

import pytest

from math2.lean.diagnostics import Kind, diagnostics
from math2.lean.protocol import (
    CommandResponse,
    PickleProofState,
    ProofStep,
    ProofStepResponse,
    ReplError,
    UnpickleProofState,
    encode,
    parse_request,
    parse_response,
    split_frames,
)
from math2.lean.repl import ReplProcess
from tests.conftest import FIXTURES, nonempty
from tests.data_conformance import cases, real_data, real_folder
from tests.lean.conftest import fake_argv

TRANSCRIPTS = FIXTURES / "repl"  # written for math2 in the REPL's documented format
REAL = real_folder("lean-repl-transcripts")  # the REPL's own, where the data is here


def _names(folder: Path | None) -> list[str]:
    return sorted(p.name.removesuffix(".in") for p in folder.glob("*.in")) if folder else []


def _pairs(folder: Path | None) -> list[str]:
    return [n for n in _names(folder) if folder and (folder / f"{n}.expected.out").exists()]


NAMES = _names(TRANSCRIPTS)
PAIRS = _pairs(TRANSCRIPTS)
# (folder, name): the fixtures', then the real ones (marked: run where the data is here)
ALL_NAMES = [(TRANSCRIPTS, n) for n in nonempty(NAMES, "transcripts")] + cases(
    "lean-repl-transcripts", [(REAL, n) for n in _names(REAL)], _names(REAL)
)
ALL_PAIRS = [(TRANSCRIPTS, n) for n in nonempty(PAIRS, "transcript-pairs")] + cases(
    "lean-repl-transcripts", [(REAL, n) for n in _pairs(REAL)], _pairs(REAL)
)

# What the messages of these transcripts are, by their (first line of) text.
EXPECTED_KIND = {
    "declaration uses `sorry`": Kind.SORRY,
    "Unknown identifier `g`": Kind.UNKNOWN_IDENTIFIER,
    "unsolved goals": Kind.UNSOLVED_GOALS,
    "unexpected token 'sorry'; expected command": Kind.PARSE_ERROR,
    "don't know how to synthesize placeholder": Kind.SYNTH_PLACEHOLDER,
    "type expected, got": Kind.TYPE_EXPECTED,
    "No goals to be solved": Kind.NO_GOALS,
    "(kernel) application type mismatch": Kind.KERNEL_ERROR,
    "(kernel) declaration has metavariables '_example'": Kind.KERNEL_ERROR,
    "fail to show termination for": Kind.TERMINATION,
    "Variable name `h` is not explicitly referenced.": Kind.LINTER,
    "Try this:": Kind.SUGGESTION,
    "Unknown environment.": Kind.REPL_UNKNOWN_ENV,
    "Unknown proof state.": Kind.REPL_UNKNOWN_PROOF_STATE,
    "Lean error:": None,  # classified by its inner text, checked below
    "Case tag `body` not found.": Kind.TACTIC_FAILED,
    "`exact?` could not close the goal. Try `apply?` to see partial suggestions.": (
        Kind.TACTIC_FAILED
    ),
}


def _frames(path: Path) -> list[dict]:
    return [json.loads(f, strict=False) for f in split_frames(path.read_text(encoding="utf-8"))]


def test_transcripts_present() -> None:
    assert TRANSCRIPTS.is_dir(), f"{TRANSCRIPTS} is missing"
    assert len(NAMES) >= 6 and len(PAIRS) == len(NAMES)


@pytest.mark.data("lean-repl-transcripts")
def test_real_transcripts_present() -> None:
    real = real_data("lean-repl-transcripts")
    assert len(_names(real)) >= 70 and len(_pairs(real)) >= 70


def test_the_fixtures_cover_every_request_and_response_kind() -> None:
    requests = {
        type(parse_request(o)).__name__ for n in NAMES for o in _frames(TRANSCRIPTS / f"{n}.in")
    }
    responses = {
        type(parse_response(o)).__name__
        for n in PAIRS
        for o in _frames(TRANSCRIPTS / f"{n}.expected.out")
    }
    assert requests == {
        "Command", "FileCommand", "ProofStep", "PickleEnvironment", "UnpickleEnvironment",
        "PickleProofState", "UnpickleProofState",
    }  # fmt: skip
    assert responses == {"CommandResponse", "ProofStepResponse", "ReplError"}
    kinds = {
        d.kind
        for n in PAIRS
        for o in _frames(TRANSCRIPTS / f"{n}.expected.out")
        for d in diagnostics(parse_response(o))
    }
    assert {k for k in EXPECTED_KIND.values() if k is not None} <= kinds


@pytest.mark.parametrize(("folder", "name"), ALL_NAMES)
def test_every_request_parses(folder: Path, name: str) -> None:
    for obj in _frames(folder / f"{name}.in"):
        req = parse_request(obj)
        # Re-encoding gives the same JSON object (our client can send what the test sent).
        assert json.loads(encode(req)) == obj


@pytest.mark.parametrize(("folder", "name"), ALL_PAIRS)
def test_every_response_parses_and_classifies(folder: Path, name: str) -> None:
    requests = _frames(folder / f"{name}.in")
    responses = _frames(folder / f"{name}.expected.out")
    assert len(requests) == len(responses)
    for req, obj in zip(requests, responses, strict=True):
        resp = parse_response(obj)
        if "message" in obj and "env" not in obj:
            assert isinstance(resp, ReplError)
        elif isinstance(parse_request(req), ProofStep | PickleProofState | UnpickleProofState):
            assert isinstance(resp, ProofStepResponse), obj
        else:
            assert isinstance(resp, CommandResponse), obj
        for d in diagnostics(resp):
            first = d.message.split("\n", 1)[0]
            if d.is_error:
                assert d.kind is not Kind.OTHER, f"unclassified error: {d.message!r}"
            if first in EXPECTED_KIND and EXPECTED_KIND[first] is not None:
                assert d.kind is EXPECTED_KIND[first], (first, d.kind)
            if d.kind in (Kind.UNKNOWN_IDENTIFIER, Kind.UNKNOWN_CONSTANT):
                assert d.identifier and d.identifier in d.message


def test_lean_error_wrappers_are_classified_by_their_inner_message() -> None:
    resp = parse_response({"message": "Lean error:\n<input>:1:1: unknown tactic"})
    assert diagnostics(resp)[0].kind is Kind.UNKNOWN_TACTIC
    resp = parse_response({"message": "Lean error:\nTactic `apply` failed: could not unify"})
    assert diagnostics(resp)[0].kind is Kind.TACTIC_FAILED


def test_identifiers_of_unknown_names() -> None:
    obj = _frames(TRANSCRIPTS / "errors.expected.out")[0]
    [d] = diagnostics(parse_response(obj))
    assert (d.kind, d.identifier) == (Kind.UNKNOWN_IDENTIFIER, "trivail")


@pytest.mark.data("lean-repl-transcripts")
def test_identifiers_of_unknown_names_in_a_real_transcript() -> None:
    obj = _frames(real_data("lean-repl-transcripts") / "invalid_line_break.expected.out")[0]
    [d] = diagnostics(parse_response(obj))
    assert (d.kind, d.identifier) == (Kind.UNKNOWN_IDENTIFIER, "bysorry")


@pytest.mark.parametrize(("folder", "name"), ALL_PAIRS)
async def test_replayed_over_a_real_pipe(folder: Path, name: str) -> None:
    """Our transport sends each recorded request and gets the recorded answer back, typed."""
    out = folder / f"{name}.expected.out"
    proc = ReplProcess(fake_argv("--replay", str(out)))
    try:
        for req_obj, expected in zip(_frames(folder / f"{name}.in"), _frames(out), strict=True):
            got = await proc.send(parse_request(req_obj), timeout=10)
            assert got == parse_response(expected)
    finally:
        await proc.close()
