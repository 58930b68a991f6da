"""The `math2` command line: thin wrappers over the library, one module per capability.

The `math2` script imports only the module of the command it runs (`COMMANDS`): the others
pull in the store, the model clients and the run engine, which cost `math2 search` most of its
start-up. `from math2.cli import app` gives the app with every command registered.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

__all__ = ["COMMANDS", "app", "command_modules", "command_name", "main"]

# Each top-level command or command group → the module under math2.cli that registers it
# (tests/test_cli_lazy.py checks this against what the modules register).
COMMANDS = {
    "align": "align",
    "bindings": "align",
    "audit": "audit",
    "check": "check",
    "copy-index": "check",
    "data": "data",
    "report": "corpus",
    "import": "corpus",
    "crosswalk": "corpus",
    "bump": "corpus",
    "select": "corpus",
    "build": "corpus",
    "datasets": "datasets",
    "eval": "eval",
    "formalize": "formalize",
    "informalize": "informalize",
    "lean": "lean",
    "runs": "runs",
    "models": "runs",
    "index": "search",
    "search": "search",
    "reviewers": "serve",
    "serve": "serve",
    "sources": "sources",
    "init": "sources",
}
# The app's own options (math2.cli._common._main): those that take a value, and the others.
_VALUED = {"--db"}
_FLAGS = {"--verbose", "-v", "--version", "--help"}


def _load(modules: set[str] | None) -> typer.Typer:
    """The app with the commands of these modules registered (every module's for None)."""
    for module in sorted(set(COMMANDS.values()) if modules is None else modules):
        importlib.import_module(f"math2.cli.{module}")
    from math2.cli._common import app

    return app


def command_name(argv: list[str]) -> str | None:
    """The command `argv` runs (`search` for `math2 --db URL search …`), None for none."""
    args = iter(argv)
    for arg in args:
        if arg in _VALUED:
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def command_modules(argv: list[str]) -> set[str] | None:
    """The modules whose commands `argv` needs: the command's own; none for `--version`
    alone; every module (None) for help, no command or a command not in the table."""
    args = iter(argv)
    for arg in args:
        if arg in _VALUED:
            next(args, None)
        elif arg == "--version":
            return set()  # eager: it prints and exits before any command is looked at
        elif arg.startswith("-"):
            if arg.split("=", 1)[0] not in _VALUED | _FLAGS and not arg.startswith("-v"):
                return None
        else:
            module = COMMANDS.get(arg)
            return {module} if module else None
    return None


def __getattr__(name: str) -> Any:
    if name == "app":
        return _load(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def main() -> None:
    """Entry point of the `math2` script."""
    import os

    from math2.errors import Math2Error

    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        os.environ["COLUMNS"] = "200"  # help boxes full width in a pipe or a log, not 80
    if command_name(sys.argv[1:]) == "search":
        # One query needs no BLAS threads: numpy's OpenBLAS starts one per core at import and
        # they spin (about 0.2 s of CPU per `math2 search`, issue 45 §6). Before numpy loads.
        for var in _BLAS_THREADS:
            os.environ.setdefault(var, "1")
        # One query is a short process that makes little cyclic garbage: the collector's
        # passes over every object its imports create (about 130 of them, one full) cost
        # 0.04-0.05 s of its CPU and free nothing it needs (issue 45 §6; docs/benchmarks.md).
        gc.disable()
        # A query's score arrays reuse freed memory (`util/heap.py`): this process searches on
        # one thread; a server's threads would each keep their own freed heap.
        from math2.util.heap import keep_freed_blocks

        keep_freed_blocks()
    app = _load(command_modules(sys.argv[1:]))
    try:
        app()
    except Math2Error as exc:
        from math2.cli._common import err

        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
    except SystemExit as exc:
        if exc.code in (0, None) and command_name(sys.argv[1:]) == "search":
            _leave_searched()
        raise
    if command_name(sys.argv[1:]) == "search":
        _leave_searched()


def _leave_searched() -> None:
    """End a `math2` process whose search succeeded without the interpreter's teardown: its
    output flushed, `os._exit(0)`. The teardown frees every module numpy, pydantic, typer and
    rich loaded, with a last full collection whatever `gc.disable()` said: 0.08-0.11 s of a
    cold search's CPU, for memory the process gives back anyway (issue 45 §6,
    docs/benchmarks.md `cost45b`). Only where math2 is the process (its script or `python -m
    math2`, not a caller of `main`), no store was opened (a database is closed as it should
    be) and the output could be flushed (`search --help` exits 0 this way too); otherwise it
    returns and the process ends as usual."""
    import os

    if not _math2_is_the_process():
        return
    if "math2.store" in sys.modules:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with that descriptor closed (`2>&-`)
                stream.flush()
    except (OSError, ValueError):  # a closed pipe: the usual exit reports it as it did
        return
    os._exit(0)


def _math2_is_the_process() -> bool:
    """Whether the interpreter was started as math2 itself (`math2 …` or `python -m math2 …`)
    by the command line it was given, not merely running math2's `__main__`: a host that runs
    the module (`coverage run -m math2`, `python -m pdb -m math2`, `runpy.run_module`) keeps
    its own exit handlers."""
    import os

    argv = getattr(sys, "orig_argv", None) or []
    if argv[1:3] == ["-m", "math2"]:
        return True
    return len(argv) > 1 and os.path.basename(argv[1]) == "math2"
