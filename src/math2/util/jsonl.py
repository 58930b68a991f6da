"""Reading JSON Lines with errors that name the file, the line and the column."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from math2.errors import InputError


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line, lazily.

    InputError for a missing or unreadable file, bytes that are not UTF-8, a line that is not
    JSON, or a line that is not a JSON object. Callers decide what an empty file means.
    """
    path = Path(path)
    try:
        fh = path.open("rb")
    except OSError as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc}"
        raise InputError(path, None, reason) from exc
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, lineno, f"not UTF-8 ({exc.reason})") from exc
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, lineno, f"not JSON: {exc.msg}", column=exc.colno) from exc
            if not isinstance(obj, dict):
                raise InputError(path, lineno, "each line must be a JSON object")
            yield lineno, obj
