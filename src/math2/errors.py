"""Errors that name the file and the place, so a user can go and fix the input."""

from __future__ import annotations

from pathlib import Path


class Math2Error(Exception):
    """Base of math2's own errors."""


class InputError(Math2Error):
    """Bad input: the file, the line (1-based, when known) and the reason."""

    def __init__(self, path: str | Path, line: int | None, reason: str, column: int | None = None):
        self.path = str(path)
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.reason}"
