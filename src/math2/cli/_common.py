"""Shared pieces of the command line: the app, per-invocation state, consoles, errors."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from math2.config import Settings, load_settings

if TYPE_CHECKING:
    from math2.store import Store
    from math2.util.progress import Reporter, Stage

app = typer.Typer(
    help="math2: a corpus of mathematics, informal and formal side by side.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

out = Console(soft_wrap=False, width=200)
err = Console(stderr=True, soft_wrap=True)


class State:
    """Per-invocation options shared by all commands."""

    settings: Settings


state = State()


def _version(value: bool) -> None:
    if value:
        from math2 import __version__

        out.print(f"math2 {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="More logging (-v info, -vv debug).")
    ] = 0,
    db: Annotated[
        str | None, typer.Option("--db", help="Store URL or SQLite path (default: MATH2_DB_URL).")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # libraries that set their own loggers to DEBUG (bm25s) follow -v too, never more
    for name in ("bm25s", "httpx", "httpcore", "urllib3"):
        logging.getLogger(name).setLevel(max(level, logging.INFO if verbose < 2 else level))
    from math2.util.progress import install

    install(_Stages(err))  # fetch, scan, import, index build: bars or lines on stderr
    overrides = {"db_url": db} if db else {}
    state.settings = load_settings(**overrides)
    from math2.util.textlimit import set_text_limit

    set_text_limit(state.settings.input.max_text_chars)  # every text input, one limit


class _Stages:
    """The command line's stage reporter (`math2.cli._progress.stage_reporter`), made when the
    first stage starts: a command that reports no stage (`math2 search`) never imports it, nor
    the run engine it shows."""

    def __init__(self, console: Console):
        self._console = console
        self._real: Reporter | None = None

    def _reporter(self) -> Reporter:
        if self._real is None:
            from math2.cli._progress import stage_reporter

            self._real = stage_reporter(self._console)
        return self._real

    def start(self, st: Stage) -> None:
        self._reporter().start(st)

    def update(self, st: Stage) -> None:
        self._reporter().update(st)

    def finish(self, st: Stage) -> None:
        self._reporter().finish(st)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error to stderr and return the Exit to raise."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)


def _store(migrate: bool = False, create: bool = False) -> Store:
    """The store of this invocation. Only `create` makes a new one (`math2 init` and `math2
    build` pass it); every other command on a missing store says so, exits 2 and leaves no
    file behind (README: "only init and build create a store")."""
    from math2.errors import Math2Error
    from math2.store import open_store

    try:
        return open_store(state.settings.db_url, migrate=migrate, create=create)
    except Math2Error as exc:
        raise fail(str(exc)) from exc


def check_range(name: str, value: float | None, low: float, high: float | None = None) -> None:
    """Exit 2 with a clear message when an option is outside its range."""
    if value is None:
        return
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise fail(f"{name} must be {bound} (got {value})")


LEAN_BACKENDS = ("repl", "kimina", "lake")


def check_backend(lean: str | None) -> None:
    """Exit 2 naming the backends when --lean is not one of them."""
    if lean is not None and lean not in LEAN_BACKENDS:
        raise fail(f"--lean {lean!r}: unknown backend (one of: {', '.join(LEAN_BACKENDS)})")
