"""Reading items to check from a `.lean` file or a `.jsonl` file, with file:line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from math2.errors import InputError
from math2.lean.checker import CheckItem, Mode
from math2.util.yamlfile import decode_utf8

_OPEN_BY = re.compile(r":=\s*by\s*$")


def load_items(path: str | Path, mode: Mode | None = None) -> list[CheckItem]:
    """Items of a `.lean` file (one item) or a `.jsonl` file (one per line).

    A JSONL line has `code`, or `header` + `formal_statement` (the benchmark shape); an id from
    `id` or `name`. A statement ending in `:= by` (a prover's prompt) gets `sorry` appended.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from exc
    text = decode_utf8(raw, path)
    if path.suffix == ".lean":
        return [CheckItem(id=path.stem, code=text, mode=mode or Mode.PLAIN)]
    if path.suffix != ".jsonl":
        raise InputError(path, None, "expected a .lean or .jsonl file")
    items: list[CheckItem] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, lineno, f"invalid JSON: {exc.msg}", column=exc.colno) from exc
        if not isinstance(obj, dict):
            raise InputError(path, lineno, "each line must be a JSON object")
        item_id = str(obj.get("id", obj.get("name", lineno)))
        if item_id in seen:
            raise InputError(path, lineno, f"duplicate id {item_id!r}")
        seen.add(item_id)
        if "code" in obj:
            code = obj["code"]
        elif "formal_statement" in obj:
            stmt = obj["formal_statement"]
            if _OPEN_BY.search(stmt):
                stmt = stmt.rstrip() + " sorry"
            code = obj.get("header", "") + stmt
        else:
            raise InputError(path, lineno, "a line needs 'code' or 'formal_statement'")
        try:
            items.append(
                CheckItem(
                    id=item_id,
                    code=code,
                    name=obj.get("theorem_name", obj.get("name")),
                    mode=Mode(obj["mode"]) if "mode" in obj else (mode or Mode.STATEMENT),
                )
            )
        except (ValidationError, ValueError) as exc:
            raise InputError(path, lineno, f"bad item: {exc}") from exc
    return items
