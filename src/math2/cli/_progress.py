"""How math2's progress facility (`math2.util.progress`) shows on the command line.

Stages (fetch, scan, import, index build) through `stage_reporter`: rich bars on a terminal, the
facility's `LineReporter` otherwise. A run (`ProgressDisplay`): a live table on a terminal (done
/ passed / failed / running, items/s, ETA, retries and timeouts, each resource's busy share, each
stage's share of the busy time); without one, a stage of the facility whose line is the run's:
its first at once, then one every `every_s` seconds on the facility's clock, and how it ended.

Light to import (every command imports it): rich's live display and tables, and `math2.runs`,
are imported where they are used."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from math2.util.progress import LineReporter, Stage

if TYPE_CHECKING:
    from rich.live import Live
    from rich.table import Table

    from math2.runs import Progress


def _eta(p: Progress) -> str:
    return "-" if p.eta_s is None else f"{p.eta_s:.0f}s"


def _outcomes(p: Progress) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(p.outcomes.items())) or "-"


def _errors(p: Progress) -> int:
    """Items that ended in error: those whose step raised (the engine counts them under the
    outcome `error` too) and those whose own outcome is `error` (a pair no check could decide).
    """
    return max(p.failed, p.outcomes.get("error", 0))


def _stages(p: Progress) -> str:
    return " ".join(f"{k} {v:.0%}" for k, v in sorted(p.stages.items(), key=lambda kv: -kv[1]))


def line(p: Progress) -> str:
    """One plain line of a run's progress (for logs, where there is no terminal)."""
    total = f"/{p.total}" if p.total else ""
    busy = " ".join(
        f"{n} {r.in_use}/{r.capacity} busy {r.utilisation:.0%}" for n, r in p.resources.items()
    )
    return (
        f"run {p.run_id} {p.job}: done {p.done}{total} ({_outcomes(p)}) · "
        f"errors {_errors(p)} · running {p.running} · skipped {p.skipped} · "
        f"{p.items_per_s:.3f} items/s · elapsed {p.elapsed_s:.0f}s · ETA {_eta(p)} · "
        f"retries {p.retries} · timeouts {p.timeouts}"
        + (f" · {busy}" if busy else "")
        + (f" · stages {_stages(p)}" if p.stages else "")
    )


def render(p: Progress) -> Table:
    """One table of a run's progress."""
    from rich.table import Table

    t = Table(title=f"run {p.run_id} · {p.job}", show_header=True, expand=False)
    cols = ("done", "outcomes", "errors", "running", "skipped", "items/s", "elapsed", "ETA")
    for col in (*cols, "retries", "timeouts"):
        t.add_column(col, justify="right")
    for name in p.resources:
        t.add_column(name, justify="right")
    t.add_column("stages (share of busy time)")
    total = f"/{p.total}" if p.total else ""
    t.add_row(
        f"{p.done}{total}",
        _outcomes(p),
        str(_errors(p)),
        str(p.running),
        str(p.skipped),
        f"{p.items_per_s:.3f}",
        f"{p.elapsed_s:.0f}s",
        _eta(p),
        str(p.retries),
        str(p.timeouts),
        *(
            f"{r.in_use}/{r.capacity} busy {r.utilisation:.0%}"
            + (f" +{r.waiting}" if r.waiting else "")
            for r in p.resources.values()
        ),
        _stages(p) or "-",
    )
    return t


class ProgressDisplay:
    """`with ProgressDisplay(console) as show: execute(..., on_progress=show)`."""

    def __init__(self, console: Console, enabled: bool = True, every_s: float = 10.0):
        self.console = console
        self.enabled = enabled and console.is_terminal
        self.lines = enabled and not console.is_terminal
        self.every_s = every_s
        self.last: Progress | None = None
        self._live: Live | None = None
        self._reporter = _lines(console, every_s) if self.lines else None
        self._stage: Stage | None = None

    def __enter__(self) -> ProgressDisplay:
        if self.enabled:
            from rich.live import Live

            self._live = Live(console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def _describe(self, _st: Stage, _finished: bool) -> str:
        assert self.last is not None
        return line(self.last)

    def __call__(self, p: Progress) -> None:
        self.last = p
        if self._live is not None:
            self._live.update(render(p))
        elif self._reporter is not None and not p.finished:
            if self._stage is None:  # the run's first line at once, then on the clock
                self._stage = Stage(
                    f"run {p.run_id} {p.job}", p.total, "items", self._reporter, self._describe
                )
                self._reporter.start(self._stage)
                self._reporter.show(self._stage)
            else:
                self._stage.update(done=p.done, total=p.total)

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)  # type: ignore[arg-type]
        elif self._stage is not None and self._reporter is not None:
            self._reporter.finish(self._stage)  # how it ended, one line like the others
            self._stage = None
        elif self.last is not None and self.lines:
            self.console.print(line(self.last), highlight=False, soft_wrap=True)
        elif self.last is not None:
            self.console.print(render(self.last))


class StageBars:
    """The stages of `math2.util.progress` on a terminal: a rich bar each, with counts, time
    and ETA, while they run; started with the first stage, stopped when none is left."""

    def __init__(self, console: Console):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self._bars = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[int, int] = {}
        self._fallback: LineReporter | None = None  # when another live display holds the screen

    def start(self, st: Stage) -> None:
        from rich.errors import LiveError

        if not self._tasks and self._fallback is None:
            try:
                self._bars.start()
            except LiveError:
                self._fallback = _lines(self.console)
        if self._fallback is not None:
            self._fallback.start(st)
            return
        self._tasks[id(st)] = self._bars.add_task(st.name, total=st.total)

    def update(self, st: Stage) -> None:
        if self._fallback is not None:
            self._fallback.update(st)
        elif (task := self._tasks.get(id(st))) is not None:
            self._bars.update(task, completed=st.done, total=st.total)

    def finish(self, st: Stage) -> None:
        if self._fallback is not None:
            self._fallback.finish(st)
            return
        task = self._tasks.pop(id(st), None)
        if task is not None and st.failed:
            self._bars.remove_task(task)
        elif task is not None:  # a stage without a total is complete when it ends
            total = st.total or max(st.done, 1)
            self._bars.update(task, completed=st.done if st.total else total, total=total)
        if not self._tasks:
            self._bars.stop()
            self._bars = type(self._bars)(*self._bars.columns, console=self.console)


def _lines(console: Console, every_s: float = 10.0) -> LineReporter:
    return LineReporter(
        lambda text: console.print(text, highlight=False, soft_wrap=True, markup=False), every_s
    )


def stage_reporter(console: Console) -> StageBars | LineReporter:
    """How the steps that are not runs show on `console`: bars on a terminal, lines otherwise."""
    return StageBars(console) if console.is_terminal else _lines(console)
