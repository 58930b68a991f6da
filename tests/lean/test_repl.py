"""The transport against the fake REPL over a real pipe: timeouts, crashes, restarts."""

import asyncio
import os

import psutil
import pytest

from math2.lean.diagnostics import Kind, diagnostics
from math2.lean.protocol import Command, CommandResponse, ProofStep, ReplError
from math2.lean.repl import LeanCrash, LeanProtocolError, LeanTimeout, ReplProcess
from tests.lean.conftest import fake_argv


@pytest.fixture
async def repl():
    proc = ReplProcess(fake_argv(), memory_limit_mb=1024)
    yield proc
    await proc.close()


async def test_clean_sorry_and_env_reuse(repl: ReplProcess) -> None:
    header = await repl.send(Command(cmd="import Mathlib"), timeout=10)
    assert isinstance(header, CommandResponse) and header.env == 0
    resp = await repl.send(Command(cmd="theorem t : 1 = 1 := by sorry", env=0), 10)
    assert isinstance(resp, CommandResponse)
    assert [d.kind for d in diagnostics(resp)] == [Kind.SORRY]
    assert resp.sorries[0].proof_state == 0
    step = await repl.send(ProofStep(tactic="rfl", proof_state=0), 10)
    assert step.proof_status == "Completed"  # type: ignore[union-attr]
    bad = await repl.send(Command(cmd="def x := 1", env=99), 10)
    assert isinstance(bad, ReplError) and bad.message == "Unknown environment."


async def test_unicode_and_newlines_cross_the_pipe(repl: ReplProcess) -> None:
    resp = await repl.send(Command(cmd="theorem «ℝ² ∀» :\n\n  ∀ x : ℝ, x ≤ x := by\n  sorry"), 10)
    assert isinstance(resp, CommandResponse) and resp.sorries


async def test_timeout_kills_the_group_then_restart_then_next_check_succeeds(
    repl: ReplProcess,
) -> None:
    await repl.send(Command(cmd="def a := 1"), 10)
    pid = repl.pid
    assert pid is not None
    with pytest.raises(LeanTimeout):
        await repl.send(Command(cmd="-- fake: hang"), timeout=0.5)
    assert not repl.alive
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    resp = await repl.send(Command(cmd="def b := 2"), 10)  # restarted on demand
    assert isinstance(resp, CommandResponse) and resp.env == 0  # a fresh process
    assert repl.pid != pid


async def test_stack_overflow_is_reported_as_a_crash_and_recovered(repl: ReplProcess) -> None:
    with pytest.raises(LeanCrash) as info:
        await repl.send(Command(cmd="-- fake: crash"), 10)
    assert info.value.reason == "stack overflow"
    assert "Stack overflow" in info.value.stderr
    resp = await repl.send(Command(cmd="def c := 3"), 10)
    assert isinstance(resp, CommandResponse)


async def test_out_of_memory_under_rlimit_as(repl: ReplProcess) -> None:
    with pytest.raises(LeanCrash) as info:
        await repl.send(Command(cmd="-- fake: oom"), 10)
    assert "out of memory" in info.value.reason


async def test_garbage_output_is_a_protocol_error(repl: ReplProcess) -> None:
    with pytest.raises(LeanProtocolError):
        await repl.send(Command(cmd="-- fake: garbage"), 10)
    assert not repl.alive
    assert isinstance(await repl.send(Command(cmd="def d := 1"), 10), CommandResponse)


async def test_process_that_exits_is_a_crash() -> None:
    proc = ReplProcess(fake_argv("--exit-after", "1"))
    try:
        await proc.send(Command(cmd="def a := 1"), 10)
        with pytest.raises(LeanCrash, match=r"exited with code 0|closed"):
            await proc.send(Command(cmd="def b := 1"), 10)
    finally:
        await proc.close()


async def test_missing_executable_is_a_clear_error() -> None:
    proc = ReplProcess(["/nonexistent/repl"])
    with pytest.raises(FileNotFoundError):
        await proc.send(Command(cmd="x"), 1)


async def test_kill_takes_the_children_too(tmp_path) -> None:
    # A wrapper that starts the fake REPL as a child, like `lake env repl` does.
    script = tmp_path / "wrapper.sh"
    argv = " ".join(fake_argv())
    script.write_text(f"#!/bin/sh\n{argv}\n")
    os.chmod(script, 0o755)
    proc = ReplProcess([str(script)])
    await proc.send(Command(cmd="def a := 1"), 10)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children
    with pytest.raises(LeanTimeout):
        await proc.send(Command(cmd="-- fake: hang"), 0.5)
    await asyncio.sleep(0.1)
    for c in children:
        assert not c.is_running() or c.status() == psutil.STATUS_ZOMBIE


async def test_rss_is_measured(repl: ReplProcess) -> None:
    await repl.send(Command(cmd="def a := 1"), 10)
    before = repl.rss_bytes()
    await repl.send(Command(cmd="-- fake: alloc 64"), 10)
    assert repl.rss_bytes() > before + 50 * 2**20
