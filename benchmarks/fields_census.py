"""Issue 45 §5: every structure's and class's fields in the scanner's reading of a Mathlib
checkout (`importers/lean_source.py`, `lean_fields.py`), counted against an independent reading
of the same files written for this check (line-based: comments blanked, each `structure` or
`class` command at column 0 read to its `where`, a field per line at the body's indentation;
no code shared with the scanner), and the store's fields where a store is given.

    python benchmarks/fields_census.py --mathlib /path/to/mathlib4 [--store STORE/math2.db]
        [--show 40]

Both readings are keyed by (module, the owner's last name part, the field's name): namespaces
are not resolved by the independent reading. Printed: each reading's count, the keys only one
of them has (the first `--show`), and the run's CPU and wall time. The independent reading
counts `name := v` in a structure that `extends` another as a parent's default (no field), as
Lean does, and has no notion of generated additive twins (those the store holds beside).
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import time
from collections import Counter
from pathlib import Path

from math2.importers.lean_source import scan_file

_HEAD = re.compile(
    r"^(?:@\[[^\n]*?\]\s*)?(?:(?:private|protected|public|noncomputable|unsafe)\s+)*"
    r"(structure|class)\s+(?!inductive\b|abbrev\b)([^\s({\[:]+)",
    re.M,
)
_IDENT = r"(?:«[^»]*»|[^\W\d][\w'!?₀-₉ₐ-ₜᵢ-ᵪ]*)"
_OPEN, _CLOSE = "([{⦃⟨", ")]}⦄⟩"
Key = tuple[str, str, str]


def blank_comments(s: str) -> str:
    """Comments (nested block ones too) and strings as spaces, lines kept."""
    out, i, n, depth = [], 0, len(s), 0
    while i < n:
        if s.startswith("/-", i):
            depth, i = depth + 1, i + 2
            out.append("  ")
        elif depth and s.startswith("-/", i):
            depth, i = depth - 1, i + 2
            out.append("  ")
        elif depth:
            out.append("\n" if s[i] == "\n" else " ")
            i += 1
        elif s.startswith("--", i):
            j = s.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif s[i] == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _where(head: str) -> int | None:
    depth = 0
    for m in re.finditer(r"[()\[\]{}⦃⦄⟨⟩]|\bwhere\b|:=", head):
        t = m.group()
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth -= 1
        elif depth == 0:
            return m.end() if t == "where" else None
    return None


def _body_fields(body: str, extends: bool) -> list[str]:
    names: list[str] = []
    indent, first = None, True
    for raw in body.split("\n"):
        s = raw.lstrip()
        if not s:
            continue
        here: int | None = len(raw) - len(s)
        if first and (m := re.match(rf"(?:{_IDENT}\s*)?::(\s|$)", s)):
            s, here = s[m.end() :].lstrip(), None  # `mk ::`: the fields follow
        first = False
        if not s:
            continue
        if indent is None or indent == -1:
            indent = here if here is not None else -1
        if here is not None and here != indent:
            continue
        s = re.sub(r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected)\s+)*", "", s)
        if s.startswith("deriving"):
            break
        if s[:1] in "([{⦃":
            inner = s[1 : s.find(_CLOSE[_OPEN.index(s[0])]) if _CLOSE[_OPEN.index(s[0])] in s
                      else len(s)]  # fmt: skip
            head = re.match(rf"\s*((?:{_IDENT}\s+)*{_IDENT})\s*[:(\[{{]", inner)
            names += head.group(1).split() if head else []
            continue
        m = re.match(rf"((?:{_IDENT}\s+)*{_IDENT})\s*(:=|:|\(|\{{|\[|⦃)", s)
        if not m:
            continue
        if m.group(2) == ":=":
            names += [] if extends else m.group(1).split()[:1]
        else:
            names += m.group(1).split()
    return names


def independent(path: Path) -> list[tuple[str, str]]:
    """(owner's last name part, field) for each field the file's structures declare."""
    text = blank_comments(path.read_text(encoding="utf-8"))
    out = []
    for m in _HEAD.finditer(text):
        nxt = re.compile(r"\n(?=\S)").search(text, m.end())
        command = text[m.end() : nxt.start() if nxt else len(text)]
        at = _where(command)
        if at is None:
            continue
        owner = m.group(2).split(".{")[0].rstrip(".").rsplit(".", 1)[-1]
        for f in _body_fields(command[at:], bool(re.search(r"\bextends\b", command[:at]))):
            out.append((owner, f.replace("«", "").replace("»", "")))
    return out


def _key(module: str, name: str) -> Key:
    parts = name.split(".")
    return (module, parts[-2] if len(parts) > 1 else "", parts[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mathlib", type=Path, required=True)
    ap.add_argument("--store", type=Path, help="a store's math2.db whose fields to count too")
    ap.add_argument("--show", type=int, default=40)
    args = ap.parse_args()
    c0, t0, load = time.process_time(), time.perf_counter(), os.getloadavg()
    ours: Counter[Key] = Counter()
    theirs: Counter[Key] = Counter()
    files = sorted((args.mathlib / "Mathlib").rglob("*.lean"))
    for path in files:
        module = ".".join(path.relative_to(args.mathlib).with_suffix("").parts)
        for owner, field in independent(path):
            theirs[(module, owner, field)] += 1
        for d in scan_file(args.mathlib, path).declarations:
            if d.kind == "field" and d.name and not d.twin_of:
                ours[_key(module, d.name.replace("«", "").replace("»", ""))] += 1
    print(f"{len(files)} files; fields: independent {sum(theirs.values())}, scanner "
          f"{sum(ours.values())}")  # fmt: skip
    readings = {"scanner": ours}
    if args.store:
        con = sqlite3.connect(args.store)
        stored: Counter[Key] = Counter(
            _key(module, name.replace("«", "").replace("»", ""))
            for name, module in con.execute("SELECT name, module FROM mentions WHERE kind='field'")
        )
        print(f"store {args.store}: {sum(stored.values())} fields")
        readings["store"] = stored
    for label, got in readings.items():
        only_them = sorted(set(theirs) - set(got))
        only_us = sorted(set(got) - set(theirs))
        print(f"\n{label}: {len(only_them)} keys only the independent reading has, "
              f"{len(only_us)} only the {label} has")  # fmt: skip
        for k in only_them[: args.show]:
            print(f"  independent only: {k}")
        for k in only_us[: args.show]:
            print(f"  {label} only: {k}")
    print(f"run: {time.process_time() - c0:.0f} s CPU, {time.perf_counter() - t0:.0f} s wall, "
          f"load average {load} -> {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
