"""Loaders for the public formats benchmarks come in; each returns `BenchmarkItem`s.

- DeepSeek-Prover jsonl (miniF2F, ProofNet): `name`, `split`, `informal_prefix` (a doc comment),
  `formal_statement` (ending in `:= by`), `header`.
- FATE json: a list of `id`, `informal_statement`, `formal_statement` (a whole file: imports, the
  doc comment, the theorem with `sorry`), `source`, `version` (the Lean toolchain).
- One `.lean` file per problem: the file name is the item name, the leading doc comment (if any)
  the informal statement, `import`/`open` lines the header, the rest the statement.
- MathForm's harness format: one JSON object per line with `name`, `problem`, `header`,
  `ground_truth` (possibly auxiliary declarations before the theorem) and `benchmark_name`;
  other fields are ignored. One file may hold several benchmarks.

Malformed input is an `InputError` naming the file and the line (or item), never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from math2.errors import InputError
from math2.util.jsonl import read_jsonl
from math2.util.textlimit import check_strings, check_text

__all__ = [
    "BenchmarkItem",
    "load_deepseek_jsonl",
    "load_fate_json",
    "load_harness_jsonl",
    "load_lean_dir",
    "split_header",
]


class BenchmarkItem(BaseModel):
    """One problem: its informal statement and the human Lean statement (the ground truth)."""

    model_config = ConfigDict(frozen=True)

    name: str
    informal: str
    formal: str
    header: str = ""
    split: str | None = None
    toolchain: str | None = None
    name_in_source: str | None = None  # set when the source's name was not unique


_DOC = re.compile(r"^\s*/--(.*?)-/\s*", re.S)
_HEADER_LINE = re.compile(r"^\s*(import|open|set_option|universe)\b")


def _strip_doc(text: str) -> str:
    m = _DOC.match(text)
    return m.group(1).strip() if m else text.strip()


def split_header(source: str) -> tuple[str, str, str]:
    """(header, doc comment, rest) of a Lean file: leading import/open lines, then a doc comment."""
    lines = source.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (not lines[i].strip() or _HEADER_LINE.match(lines[i])):
        i += 1
    header = "".join(lines[:i]).strip()
    rest = "".join(lines[i:])
    m = _DOC.match(rest)
    doc = m.group(1).strip() if m else ""
    body = rest[m.end() :] if m else rest
    return header, doc, body.strip()


def _read_lines(path: Path):
    """(line number, object) of a JSONL file; an empty file is an error."""
    rows = read_jsonl(path)
    first = next(rows, None)
    if first is None:
        raise InputError(path, None, "empty file")
    yield first
    yield from rows


def _need(path: Path, no: int | None, obj: dict, key: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v.strip():
        where = f"item {obj.get('name', obj.get('id', '?'))!r}: " if no is None else ""
        raise InputError(path, no, f"{where}field {key!r} missing or not a non-empty string")
    return v


def _unique(path: Path, items: list[BenchmarkItem]) -> list[BenchmarkItem]:
    """Names made unique: a repeated name gets `~2`, `~3`, … (the source name is kept)."""
    seen: dict[str, int] = {}
    out = []
    for it in items:
        k = seen.get(it.name, 0) + 1
        seen[it.name] = k
        if k > 1:
            it = it.model_copy(update={"name": f"{it.name}~{k}", "name_in_source": it.name})
        out.append(it)
    return out


def load_deepseek_jsonl(path: str | Path, split: str | None = None) -> list[BenchmarkItem]:
    """miniF2F / ProofNet in DeepSeek-Prover-V1.5's jsonl; `split` keeps one split only."""
    path = Path(path)
    out = []
    for no, obj in _read_lines(path):
        if split is not None and obj.get("split") != split:
            continue
        out.append(
            BenchmarkItem(
                name=_need(path, no, obj, "name"),
                informal=_strip_doc(_need(path, no, obj, "informal_prefix")),
                formal=_need(path, no, obj, "formal_statement").strip(),
                header=str(obj.get("header") or "").strip(),
                split=obj.get("split"),
            )
        )
    if not out:
        raise InputError(path, None, f"no items (split {split!r})")
    return _unique(path, out)


def load_fate_json(path: str | Path) -> list[BenchmarkItem]:
    """FATE-M/H/X: a JSON list of objects with a whole Lean file as `formal_statement`."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(
            path, getattr(e, "lineno", None), f"not JSON: {e}", column=getattr(e, "colno", None)
        ) from e
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror}") from e
    if not isinstance(data, list) or not data:
        raise InputError(path, None, "expected a non-empty JSON list of items")
    out = []
    for i, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise InputError(path, None, f"item {i}: expected a JSON object")
        if "id" not in obj:
            raise InputError(path, None, f"item {i}: no 'id'")
        check_strings(obj, path, None, f"[{i}]")
        header, _doc, body = split_header(_need(path, None, obj, "formal_statement"))
        out.append(
            BenchmarkItem(
                name=str(obj["id"]),
                informal=_need(path, None, obj, "informal_statement").strip(),
                formal=body,
                header=header,
                toolchain=obj.get("version"),
            )
        )
    return _unique(path, out)


def load_lean_dir(
    folder: str | Path, informal: dict[str, str] | None = None
) -> list[BenchmarkItem]:
    """One `.lean` file per problem; the informal text is the doc comment (or `informal[name]`)."""
    folder = Path(folder)
    files = sorted(folder.glob("*.lean"))
    if not files:
        raise InputError(folder, None, "no .lean files")
    out = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f, None, f"not UTF-8 ({e.reason} at byte {e.start})") from e
        check_text(text, "the file", f)
        header, doc, body = split_header(text)
        inf = (informal or {}).get(f.stem, doc)
        if not inf:
            raise InputError(f, None, "no informal statement (no doc comment before the theorem)")
        if not body:
            raise InputError(f, None, "no statement after the header")
        out.append(BenchmarkItem(name=f.stem, informal=inf, formal=body, header=header))
    return out


def load_harness_jsonl(path: str | Path) -> dict[str, list[BenchmarkItem]]:
    """MathForm's harness format: items grouped by `benchmark_name` (the file's stem where a
    line has none); extra fields ignored."""
    path = Path(path)
    groups: dict[str, list[BenchmarkItem]] = {}
    for no, obj in _read_lines(path):
        bench = str(obj.get("benchmark_name") or "").strip() or path.stem.replace("_", "-")
        groups.setdefault(bench, []).append(
            BenchmarkItem(
                name=_need(path, no, obj, "name"),
                informal=_need(path, no, obj, "problem").strip(),
                formal=_need(path, no, obj, "ground_truth").strip(),
                header=str(obj.get("header") or "").strip(),
            )
        )
    return {k: _unique(path, v) for k, v in groups.items()}
