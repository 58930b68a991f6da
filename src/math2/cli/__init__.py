"""The `math2` command line: thin wrappers over the library, one module per capability."""

from __future__ import annotations

import sys

import math2.cli.audit  # checks area: math2 audit
import math2.cli.check  # checks area: math2 check, math2 copy-index
import math2.cli.informalize  # noqa: F401 (checks area: these three register commands)
from math2.cli import corpus, formalize, lean, runs, search, sources  # noqa: F401 (commands)
from math2.cli._common import app, err
from math2.errors import Math2Error

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the `math2` script."""
    try:
        app()
    except Math2Error as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
