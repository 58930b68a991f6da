"""A live progress display for runs: counts per state, items/s, resource utilisation."""

from __future__ import annotations

from rich.console import Console
from rich.live import Live
from rich.table import Table

from math2.runs import Progress


def render(p: Progress) -> Table:
    """One table of a run's progress."""
    t = Table(title=f"run {p.run_id} · {p.job}", show_header=True, expand=False)
    for col in ("done", "failed", "running", "skipped", "items/s", "elapsed"):
        t.add_column(col, justify="right")
    for name in p.resources:
        t.add_column(name, justify="right")
    total = f"/{p.total}" if p.total else ""
    t.add_row(
        f"{p.done}{total}",
        str(p.failed),
        str(p.running),
        str(p.skipped),
        f"{p.items_per_s:.2f}",
        f"{p.elapsed_s:.0f}s",
        *(
            f"{r.in_use}/{r.capacity} busy {r.utilisation:.0%}"
            + (f" +{r.waiting}" if r.waiting else "")
            for r in p.resources.values()
        ),
    )
    return t


class ProgressDisplay:
    """`with ProgressDisplay(console) as show: execute(..., on_progress=show)`."""

    def __init__(self, console: Console, enabled: bool = True):
        self.console = console
        self.enabled = enabled and console.is_terminal
        self.last: Progress | None = None
        self._live: Live | None = None

    def __enter__(self) -> ProgressDisplay:
        if self.enabled:
            self._live = Live(console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __call__(self, p: Progress) -> None:
        self.last = p
        if self._live is not None:
            self._live.update(render(p))

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)  # type: ignore[arg-type]
        elif self.last is not None:
            self.console.print(render(self.last))
