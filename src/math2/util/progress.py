"""Progress of the long steps that are not runs (fetch, scan, import, index build, a build log).

Library code says what it is doing and how far it is; whoever runs it decides how that shows:

    with stage("scan mathlib", total=len(files), unit="files") as st:
        for path in files:
            ...
            st.advance()

    for path in track(files, "scan mathlib", unit="files"):
        ...

Nothing is shown unless a reporter is installed (`with reporting(reporter): ...`); the command
line installs a rich bar with counts and an ETA on a terminal (`math2.cli._progress`), and
`LineReporter` otherwise: one line when a stage ends (count, seconds), and one line every
`every_s` seconds while a long stage runs (count, share, ETA), so a log is never silent long.
The runs engine has its own `Progress` (items by outcome, resources); this is for the rest.

`python -m math2.util.progress --stage NAME [--pattern RE]` turns a build log on stdin into the
same lines (scripts/setup-llama.sh's llama.cpp build).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Protocol, TypeVar

T = TypeVar("T")

# a compiler's step in a build log: CMake's "[ 45%]" or ninja's "[12/345]"
BUILD_STEPS = r"^\s*\[\s*(?:(\d+)%|(\d+)/(\d+))\]"


class Stage:
    """One step: a name, a count done out of `total` (None: unknown), since when."""

    def __init__(self, name: str, total: int | None, unit: str, reporter: Reporter | None):
        self.name = name
        self.total = total
        self.unit = unit
        self.done = 0
        self.note = ""
        self.failed = False  # it ended by an exception: no end line (the error says why)
        self.started = time.monotonic()
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
    """Without a terminal: a line when a stage ends, one every `every_s` while it runs."""

    def __init__(self, write: Callable[[str], None], every_s: float = 10.0):
        self.write = write
        self.every_s = every_s
        self._last: dict[int, float] = {}

    def start(self, st: Stage) -> None:
        self._last[id(st)] = time.monotonic()

    def update(self, st: Stage) -> None:
        now = time.monotonic()
        if st.total is not None and st.done >= st.total:
            return  # complete: the stage's end line says so
        if now - self._last.get(id(st), now) >= self.every_s:
            self._last[id(st)] = now
            self.write(line(st))

    def finish(self, st: Stage) -> None:
        self._last.pop(id(st), None)
        if not st.failed:
            self.write(line(st, finished=True))


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
                st.advance()
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
