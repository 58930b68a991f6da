"""Reading statements to formalize: JSONL, one object a line, field names configurable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from math2.errors import InputError
from math2.roles.formalize.records import FormalizeInput
from math2.util.files import file_digest as input_digest
from math2.util.jsonl import read_jsonl

__all__ = ["input_digest", "read_inputs"]

STATEMENT_FIELDS = ("statement", "informal_statement", "problem", "nl_statement", "informal")
ID_FIELDS = ("id", "name", "problem_id")


def read_inputs(
    path: Path, field: str | None = None, limit: int | None = None
) -> Iterator[FormalizeInput]:
    """Statements from a JSONL file, lazily; InputError names the file and line of bad input.

    The statement is `field` when given, else the first of statement / informal_statement /
    problem / nl_statement / informal; the id is `id` / `name` / `problem_id`, else the line
    number; a `header` field adds its non-import lines (opens, namespaces) to the Lean header.
    """
    path = Path(path)
    fields = (field,) if field else STATEMENT_FIELDS
    seen: set[str] = set()
    count = 0
    for lineno, obj in read_jsonl(path):
        text = next((obj[f] for f in fields if isinstance(obj.get(f), str)), None)
        if text is None or not text.strip():
            raise InputError(
                path, lineno, f"no statement: expected a text field {' or '.join(fields)}"
            )
        ident = next((str(obj[f]) for f in ID_FIELDS if obj.get(f) not in (None, "")), None)
        ident = ident or f"line{lineno}"
        if ident in seen:
            raise InputError(path, lineno, f"duplicate id {ident!r}")
        seen.add(ident)
        header = obj.get("header")
        extra = None
        if isinstance(header, str):
            kept = [ln for ln in header.splitlines() if not ln.strip().startswith("import ")]
            extra = "\n".join(kept).strip() or None
        try:
            node = obj.get("node")
            yield FormalizeInput(
                id=ident,
                statement=text.strip(),
                header=extra,
                source=f"{path}:{lineno}",
                node=node if isinstance(node, str) and node else None,
            )
        except ValidationError as exc:
            raise InputError(path, lineno, str(exc.errors()[0]["msg"])) from exc
        count += 1
        if limit is not None and count >= limit:
            return
    if count == 0:
        raise InputError(path, None, "no statements in the file (it is empty)")
