"""Reading (informal, formal) pairs from JSONL: one object a line, clear errors by file and line.

Fields: the id is `id` / `name` (else the line number); the informal side is `informal` /
`informal_statement` / `statement` / `informal_prefix` / `problem` (a `/-- … -/` doc comment is
unwrapped); the formal side is `formal` / `formal_statement` / `lean` / `ground_truth`;
optional `header`; `role`, `library`, `stratum`, `source` and `agent_text_id` are kept in the
pair's meta.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from math2.checks.base import Pair
from math2.errors import InputError
from math2.util.jsonl import read_jsonl

__all__ = ["read_pairs"]

# `problem` / `ground_truth`: MathForm's evaluation-harness fields.
INFORMAL = ("informal", "informal_statement", "statement", "informal_prefix", "problem")
FORMAL = ("formal", "formal_statement", "lean", "ground_truth")
META = ("role", "library", "stratum", "source", "agent_text_id")


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
        if ident in seen:
            raise InputError(path, lineno, f"duplicate id {ident!r}")
        seen.add(ident)
        header = obj.get("header") if isinstance(obj.get("header"), str) else ""
        meta = {k: obj[k] for k in META if obj.get(k) is not None}
        meta.setdefault("source", f"{path.name}:{lineno}")
        yield Pair(id=ident, informal=_unwrap(informal), formal=formal, header=header, meta=meta)
        count += 1
        if limit is not None and count >= limit:
            return
    if count == 0:
        raise InputError(path, None, "no pairs in the file (it is empty)")
