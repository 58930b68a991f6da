"""math2's one progress facility: the stages of builds (fetch, scan, import, index build, a
build log) and the runs of `math2.runs`, shown as bars on a terminal or as lines in a log.

Library code says what it is doing and how far it is; whoever runs it decides how that shows:

    with stage("scan mathlib", total=len(files), unit="files") as st:
        for path in files:
            ...
            st.advance()

    for path in track(files, "scan mathlib", unit="files"):
        ...

Nothing is shown unless a reporter is installed (`with reporting(reporter): ...`); the command
line installs a rich bar with counts and an ETA on a terminal (`math2.cli._progress`), and
`LineReporter` otherwise: one line when a stage ends (count, seconds), one line every `every_s`
seconds while a stage counts (count, share, ETA), and, on a clock of its own that starts when
the reporter is made, a line for the innermost open stage whenever `every_s` seconds passed
without one — a stage that counts nothing still says what it is doing and for how long, so a
log is never silent longer than `every_s`. A run of `math2.runs` is a stage too: its display
(`math2.cli._progress.ProgressDisplay`) gives the stage its own line (`Stage.describe`).

This module imports the standard library only (the command line imports it at every start).

`python -m math2.util.progress --stage NAME [--pattern RE]` turns a build log on stdin into the
same lines (scripts/setup-llama.sh's llama.cpp build).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Protocol, TypeVar

T = TypeVar("T")

# a compiler's step in a build log: CMake's "[ 45%]" or ninja's "[12/345]"
BUILD_STEPS = r"^\s*\[\s*(?:(\d+)%|(\d+)/(\d+))\]"


class Stage:
    """One step: a name, a count done out of `total` (None: unknown), since when.

    `describe(stage, finished)`, when given, is the stage's line (a run's: items by outcome,
    errors, retries), instead of `line`'s count, time and ETA."""

    def __init__(
        self,
        name: str,
        total: int | None,
        unit: str,
        reporter: Reporter | None,
        describe: Callable[[Stage, bool], str] | None = None,
    ):
        self.name = name
        self.total = total
        self.unit = unit
        self.done = 0
        self.note = ""
        self.failed = False  # it ended by an exception: no end line (the error says why)
        self.started = time.monotonic()
        self.describe = describe
        self._reporter = reporter

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    @property
    def eta_s(self) -> float | None:
        """At the rate so far; None without a total or before anything is done."""
        if not self.total or not self.done or self.done >= self.total:
            return None
        return self.elapsed_s / self.done * (self.total - self.done)

    def advance(self, n: int = 1) -> None:
        self.update(done=self.done + n)

    def update(
        self, done: int | None = None, total: int | None = None, note: str | None = None
    ) -> None:
        if done is not None:
            self.done = done
        if total is not None:
            self.total = total
        if note is not None:
            self.note = note
        if self._reporter is not None:
            self._reporter.update(self)


class Reporter(Protocol):
    """Where stages show: started, updated (often: keep it cheap), finished."""

    def start(self, st: Stage) -> None: ...
    def update(self, st: Stage) -> None: ...
    def finish(self, st: Stage) -> None: ...


_reporter: ContextVar[Reporter | None] = ContextVar("math2_progress_reporter", default=None)


def install(reporter: Reporter | None) -> None:
    """Show every later stage of this context (the command line's process) through `reporter`."""
    _reporter.set(reporter)


@contextlib.contextmanager
def reporting(reporter: Reporter | None) -> Iterator[Reporter | None]:
    """Show every stage opened inside the block through `reporter`."""
    token = _reporter.set(reporter)
    try:
        yield reporter
    finally:
        _reporter.reset(token)


@contextlib.contextmanager
def stage(name: str, total: int | None = None, unit: str = "items") -> Iterator[Stage]:
    """A stage shown by the installed reporter (none: nothing is shown)."""
    reporter = _reporter.get()
    st = Stage(name, total, unit, reporter)
    if reporter is not None:
        reporter.start(st)
    try:
        yield st
    except GeneratorExit:  # a loop over `track` that stopped early: the stage ends there
        raise
    except BaseException:
        st.failed = True
        raise
    finally:
        if reporter is not None:
            reporter.finish(st)


def track(
    items: Iterable[T], name: str, total: int | None = None, unit: str = "items", batch: int = 1
) -> Iterator[T]:
    """Each of `items`, counted as a stage (total: `len(items)` when it has one); the count
    moves every `batch` items (cheap enough for a loop over every declaration) and at the end."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with stage(name, total, unit) as st:
        n = 0
        for it in items:
            yield it
            n += 1
            if n % batch == 0:
                st.update(done=n)
        if st.done != n:
            st.update(done=n)


@contextlib.contextmanager
def heartbeat(st: Stage, every_s: float = 1.0) -> Iterator[Stage]:
    """While the block runs one long call that counts nothing (a library's index build), poke
    `st` every `every_s` seconds so that its reporter's periodic line (the time so far) comes."""
    import threading

    done = threading.Event()

    def beat() -> None:
        while not done.wait(every_s):
            st.update()

    thread = threading.Thread(target=beat, name=f"heartbeat {st.name}", daemon=True)
    thread.start()
    try:
        yield st
    finally:
        done.set()
        thread.join()


def _count(st: Stage) -> str:
    if st.total is None and not st.done:
        return ""  # nothing counted: the time says it
    if st.unit == "%":
        return f"{st.done}%"
    if st.total:
        return f"{st.done}/{st.total} {st.unit} ({st.done / st.total:.0%})"
    return f"{st.done} {st.unit}"


def line(st: Stage, finished: bool = False) -> str:
    """One plain line of a stage: its count, the time so far, the ETA while it runs."""
    if st.describe is not None:
        return st.describe(st, finished)
    count = _count(st)
    if finished:
        text = (
            f"{st.name}: {count} in {st.elapsed_s:.0f}s"
            if count
            else f"{st.name}: done in {st.elapsed_s:.0f}s"
        )
    else:
        eta = st.eta_s
        text = f"{st.name}: {count + ' · ' if count else ''}{st.elapsed_s:.0f}s" + (
            f" · ETA {eta:.0f}s" if eta is not None else ""
        )
    return text + (f" · {st.note}" if st.note else "")


class LineReporter:
    """Without a terminal: a line when a stage ends, one every `every_s` while it counts, and
    one on the reporter's clock for the innermost open stage when `every_s` passed without any
    line (the clock starts when the reporter is made; `every_s` <= 0: a line at every update and
    no clock, for tests)."""

    def __init__(self, write: Callable[[str], None], every_s: float = 10.0):
        self.write = write
        self.every_s = every_s
        self.created = time.monotonic()
        self._last: dict[int, float] = {}  # each open stage's last line (its start before one)
        self._open: list[Stage] = []  # open stages, innermost last
        self._wrote = self.created  # the last line of any stage
        self._lock = threading.RLock()
        self._clock: tuple[threading.Thread, threading.Event] | None = None

    def _emit(self, text: str, now: float) -> None:
        self._wrote = now
        self.write(text)

    def start(self, st: Stage) -> None:
        with self._lock:
            self._last[id(st)] = st.started
            self._open.append(st)
            if self.every_s > 0 and self._clock is None:
                stop = threading.Event()
                clock = threading.Thread(
                    target=self._tick, args=(stop,), name="progress clock", daemon=True
                )
                self._clock = (clock, stop)
                clock.start()

    def show(self, st: Stage) -> None:
        """The stage's line now, whatever the time since its last."""
        with self._lock:
            now = time.monotonic()
            self._last[id(st)] = now
            self._emit(line(st), now)

    def update(self, st: Stage) -> None:
        with self._lock:
            now = time.monotonic()
            if st.total is not None and st.done >= st.total:
                return  # complete: the stage's end line says so
            if now - self._last.get(id(st), now) >= self.every_s:
                self._last[id(st)] = now
                self._emit(line(st), now)

    def finish(self, st: Stage) -> None:
        with self._lock:
            self._last.pop(id(st), None)
            if st in self._open:
                self._open.remove(st)
            if not st.failed:
                self._emit(line(st, finished=True), time.monotonic())
            clock = self._clock if not self._open else None
            if clock is not None:
                self._clock = None
                clock[1].set()
        if clock is not None and clock[0] is not threading.current_thread():
            clock[0].join()

    def _tick(self, stop: threading.Event) -> None:
        """The clock: a line for the innermost open stage when `every_s` passed without any
        line since it started."""
        step = min(1.0, self.every_s / 4)
        while not stop.wait(step):
            with self._lock:
                if not self._open:
                    continue
                st = self._open[-1]
                now = time.monotonic()
                if now - max(self._wrote, self._last.get(id(st), now)) < self.every_s:
                    continue
                self._last[id(st)] = now
                self._emit(line(st), now)


def follow_log(lines: Iterable[str], name: str, pattern: str | None, reporter: Reporter) -> None:
    """Count a build log's lines as a stage: with `pattern` (the groups that matched: one number
    a percentage, two a step and its total), its last match is the stage's share and its line
    the note; without, the count is lines."""
    rx = re.compile(pattern) if pattern else None
    total, unit = (100, "%") if rx else (None, "lines")
    with reporting(reporter), stage(name, total=total, unit=unit) as st:
        for raw in lines:
            m = rx.search(raw) if rx else None
            if rx is None:
                st.update(done=st.done + 1, note=raw.strip()[:100] or None)
            elif m:
                got = [int(g) for g in m.groups() if g is not None]
                # one number: a percentage; two ("[12/345]"): a step of a total
                done = got[0] if len(got) == 1 else 100 * got[0] // max(got[1], 1)
                st.update(done=done, note=raw.strip()[:100])
            else:
                st.update()  # a line without a share still lets the periodic line come


def main(argv: list[str] | None = None) -> int:
    """Read a build log on stdin; print a progress line every `--every` seconds and one at the
    end (scripts/setup-llama.sh: `pip -v … | tee LOG | python -m math2.util.progress …`)."""
    ap = argparse.ArgumentParser(prog="python -m math2.util.progress")
    ap.add_argument("--stage", required=True)
    ap.add_argument(
        "--pattern",
        default=None,
        help="regex: the groups that match are a percentage, or a step and its total",
    )
    ap.add_argument("--build", action="store_true", help="the pattern of CMake's or ninja's steps")
    ap.add_argument("--every", type=float, default=30.0)
    args = ap.parse_args(argv)
    follow_log(
        sys.stdin,
        args.stage,
        BUILD_STEPS if args.build else args.pattern,
        LineReporter(lambda t: print(t, flush=True), args.every),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
