"""Reading (informal, formal) pairs from JSONL: one object a line, clear errors by file and line.

Fields: the id is `id` / `name` (else the line number); the informal side is `informal` /
`informal_statement` / `statement` / `informal_prefix` / `problem` (a `/-- … -/` doc comment is
unwrapped); the formal side is `formal` / `formal_statement` / `lean` / `ground_truth` (MathForm's
harness fields); optional `header`; `role`, `library`, `stratum`, `source` and `agent_text_id`
are kept in the pair's meta; `faithful` (a person's verdict, true or false) and `error_types` (a
list of strings) are kept there too, for calibration. Every text field has a size limit
(`TEXT_LIMITS`, `META_LIMIT`): a longer one is an error naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from math2.checks.base import META_LIMIT, TEXT_LIMITS, Pair
from math2.errors import InputError
from math2.util.jsonl import read_jsonl

__all__ = ["read_pairs"]

# `problem` / `ground_truth`: MathForm's evaluation-harness fields.
INFORMAL = ("informal", "informal_statement", "statement", "informal_prefix", "problem")
FORMAL = ("formal", "formal_statement", "lean", "ground_truth")
META = ("role", "library", "stratum", "source", "agent_text_id")


def _limit(path: Path, lineno: int, field: str, value: str, limit: int) -> None:
    if len(value) > limit:
        raise InputError(
            path, lineno, f"{field!r} is {len(value):,} characters; the limit is {limit:,}"
        )


def _labels(path: Path, lineno: int, obj: dict) -> dict:
    """The human verdict of a labelled pair: `faithful` (bool), `error_types` (strings)."""
    out: dict = {}
    if "faithful" in obj:
        if not isinstance(obj["faithful"], bool):
            raise InputError(path, lineno, "'faithful' must be true or false")
        out["faithful"] = obj["faithful"]
    if obj.get("error_types") is not None:
        types = obj["error_types"]
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise InputError(path, lineno, "'error_types' must be a list of strings")
        for t in types:
            _limit(path, lineno, "error_types", t, 100)
        out["error_types"] = types
    return out


def _unwrap(text: str) -> str:
    t = text.strip()
    if t.startswith("/--") and t.endswith("-/"):
        t = t[3:-2].strip()
    return t


def read_pairs(path: Path, limit: int | None = None) -> Iterator[Pair]:
    path = Path(path)
    seen: set[str] = set()
    count = 0
    for lineno, obj in read_jsonl(path):
        informal = next((obj[f] for f in INFORMAL if isinstance(obj.get(f), str)), None)
        formal = next((obj[f] for f in FORMAL if isinstance(obj.get(f), str)), None)
        if not informal or not informal.strip():
            raise InputError(path, lineno, f"no informal text ({' / '.join(INFORMAL)})")
        if not formal or not formal.strip():
            raise InputError(path, lineno, f"no formal statement ({' / '.join(FORMAL)})")
        ident = next((str(obj[f]) for f in ("id", "name") if obj.get(f) not in (None, "")), "")
        ident = ident or f"line{lineno}"
        header = obj.get("header") if isinstance(obj.get("header"), str) else ""
        for field, value in (
            ("id", ident),
            ("informal", informal),
            ("formal", formal),
            ("header", header),
        ):
            _limit(path, lineno, field, value, TEXT_LIMITS[field])
        for k in META:
            if isinstance(obj.get(k), str):
                _limit(path, lineno, k, obj[k], META_LIMIT)
        if ident in seen:
            raise InputError(path, lineno, f"duplicate id {ident!r}")
        seen.add(ident)
        meta = {k: obj[k] for k in META if obj.get(k) is not None}
        meta.update(_labels(path, lineno, obj))
        meta.setdefault("source", f"{path.name}:{lineno}")
        yield Pair(id=ident, informal=_unwrap(informal), formal=formal, header=header, meta=meta)
        count += 1
        if limit is not None and count >= limit:
            return
    if count == 0:
        raise InputError(path, None, "no pairs in the file (it is empty)")
