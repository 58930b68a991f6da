"""The `math2` command line: thin wrappers over the library, one module per capability."""

from __future__ import annotations

import sys

from math2.cli import (  # noqa: F401 (each module registers its commands)
    align,
    audit,
    check,
    corpus,
    data,
    datasets,
    eval,
    formalize,
    informalize,
    lean,
    runs,
    search,
    serve,
    sources,
)
from math2.cli._common import app, err
from math2.errors import Math2Error

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the `math2` script."""
    import os

    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        os.environ["COLUMNS"] = "200"  # help boxes full width in a pipe or a log, not 80
    try:
        app()
    except Math2Error as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
