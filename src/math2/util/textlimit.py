"""One size limit on every text that enters math2: a string field of a JSONL or JSON input
(statements to formalize, pairs to check, benchmarks, grades, Lean items), a scalar of a YAML
file (the manifest, theorem lists), a field of a web form, a model's provider, terms and notes.

The limit is `input.max_text_chars` (100,000 characters by default; `MATH2_INPUT__MAX_TEXT_CHARS`),
set once per process by the command line (`set_text_limit`). A longer text is an InputError that
names the file, the line and the field, before anything is written or sent to a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from math2.errors import InputError

DEFAULT_MAX_TEXT_CHARS = 100_000
SETTING = "input.max_text_chars"
_limit = DEFAULT_MAX_TEXT_CHARS


def text_limit() -> int:
    """The limit in force, in characters."""
    return _limit


def set_text_limit(chars: int) -> None:
    """Set the limit for this process (the command line does, from the settings)."""
    global _limit
    if chars < 1:
        raise ValueError(f"{SETTING} must be at least 1 (got {chars})")
    _limit = chars


def too_long(value: str, what: str) -> str | None:
    """The reason `value` is refused, or None when it is within the limit."""
    if len(value) <= _limit:
        return None
    return (
        f"{what} is {len(value):,} characters; the limit is {_limit:,} "
        f"({SETTING}, MATH2_INPUT__MAX_TEXT_CHARS)"
    )


def check_text(value: str, what: str, path: str | Path = "<input>", line: int | None = None):
    """InputError naming the file, the line and the field when `value` is over the limit."""
    if (reason := too_long(value, what)) is not None:
        raise InputError(path, line, reason)


def check_strings(obj: Any, path: str | Path, line: int | None, where: str = "") -> None:
    """Every string in `obj` (a parsed JSON value, nested) within the limit; the error names
    the field by its path (`informal`, `items[3].formal`)."""
    if isinstance(obj, str):
        check_text(obj, f"field {where!r}" if where else "the value", path, line)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            check_strings(v, path, line, f"{where}.{k}" if where else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            check_strings(v, path, line, f"{where}[{i}]")
