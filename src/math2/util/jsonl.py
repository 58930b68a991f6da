"""Reading JSON Lines with errors that name the file, the line and the column."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from math2.errors import InputError
from math2.util.textlimit import check_strings, text_limit


def read_jsonl(
    path: str | Path, *, check_text: bool = True
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line, lazily.

    InputError for a missing or unreadable file, bytes that are not UTF-8, a line that is not
    JSON, a line that is not a JSON object, or a string in it over the text limit
    (`math2.util.textlimit`); a line over `LINE_CAP_BYTES` (or 16 times that limit) is not
    even parsed. Callers decide what an empty file means. `check_text=False`: the caller checks
    the text limit itself (to refuse one item, not the file).
    """
    path = Path(path)
    try:
        fh = path.open("rb")
    except OSError as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc}"
        raise InputError(path, None, reason) from exc
    with fh:
        lineno = 0
        while raw := fh.readline(_line_cap() + 1):
            lineno += 1
            if len(raw) > _line_cap():
                raise InputError(
                    path, lineno, f"the line is over {_line_cap():,} bytes; not read further"
                )
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
            if check_text:
                check_strings(obj, path, lineno)
            yield lineno, obj


LINE_CAP_BYTES = 64 << 20  # a line is not parsed past this (nor 16 times the text limit)


def _line_cap() -> int:
    return max(LINE_CAP_BYTES, 16 * text_limit())
