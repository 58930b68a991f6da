"""Check the dev sets in `benchmarks/devsets/` against a built store, and say what they hold.

    python benchmarks/check_devsets.py --db sqlite:///math2.db [--devsets DIR] [--sets GLOB]

Every answer must be an active, completable, non-deprecated Mathlib declaration of the store
(built at the pin); an item that records its target `kind` must agree with the store's kind of
its first answer (grouped as in `KINDS`). Prints, per set, the number of items and their
target kinds, then every problem found; exits 1 when there is one. `benchmarks/retrieval.py`
reads the sets and kinds through `load_sets` and `kind_of`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path

import yaml
from sqlalchemy import select

from math2.retrieval.devsets import TARGET_KIND, TARGET_KINDS, devsets_dir, kind_of
from math2.store import Mention, Source, Store

DEVSETS = devsets_dir()
# A declaration's kind → the target kind a dev set reports by: `math2.retrieval.devsets`.
KINDS = TARGET_KIND


def load_sets(folder: Path = DEVSETS) -> dict[str, list[dict]]:
    """Every `*.yaml` dev set under `folder`, by file stem: a list of items with `q` (the
    query), `a` (the answers, best first) and, in the sets of issue 33, `kind`."""
    out = {}
    for f in sorted(folder.glob("*.yaml")):
        items = yaml.safe_load(f.read_text(encoding="utf-8")) or []
        for i, it in enumerate(items):
            if not isinstance(it, dict) or not it.get("q") or not it.get("a"):
                raise SystemExit(f"{f}: item {i + 1} needs a query `q` and answers `a`")
            if "kind" in it and it["kind"] not in TARGET_KINDS:
                raise SystemExit(f"{f}: item {i + 1}: unknown kind {it['kind']!r}")
        out[f.stem] = items
    return out


def declarations(db: str) -> dict[str, tuple[str, bool, bool, bool]]:
    """Every Mathlib declaration of the store by name: (kind, active, completable, deprecated)."""
    store = Store(db)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        if src is None:
            raise SystemExit(f"{db}: no mathlib source in this store")
        rows = s.execute(
            select(Mention.name, Mention.kind, Mention.status, Mention.allow_completion,
                   Mention.extra).where(Mention.source_id == src.id)
        ).all()  # fmt: skip
    out = {}
    for name, kind, status, completable, extra in rows:
        deprecated = "deprecated_since" in (extra or {})
        known = out.get(name)
        entry = (kind or "", status == "active", bool(completable), deprecated)
        if known is None or (entry[1] and entry[2]):
            out[name] = entry
    return out


def problems(sets: dict[str, list[dict]], decls: dict) -> list[str]:
    found = []
    seen: dict[str, str] = {}
    for name, items in sets.items():
        for it in items:
            where = f"{name}: {it['q']!r}"
            if it["q"] in seen:
                found.append(f"{where}: the same query is in {seen[it['q']]}")
            seen.setdefault(it["q"], name)
            for a in it["a"]:
                d = decls.get(a)
                if d is None:
                    found.append(f"{where}: {a} is not a Mathlib declaration of the store")
                elif not (d[1] and d[2]):
                    found.append(f"{where}: {a} is not active and completable")
                elif d[3]:
                    found.append(f"{where}: {a} is deprecated")
            first = decls.get(it["a"][0])
            if "kind" in it and first and kind_of(first[0]) != it["kind"]:
                found.append(f"{where}: kind {it['kind']} but {it['a'][0]} is a {first[0]}")
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="sqlite:///math2.db")
    ap.add_argument("--devsets", type=Path, default=DEVSETS)
    ap.add_argument("--sets", default="*", help="only the sets whose name matches this glob")
    args = ap.parse_args()
    sets = {k: v for k, v in load_sets(args.devsets).items() if fnmatch(k, args.sets)}
    if not sets:  # a check that finds nothing to check fails (the blind sets are elsewhere)
        raise SystemExit(f"{args.devsets}: no dev set matches {args.sets!r}")
    decls = declarations(args.db)
    total: Counter[str] = Counter()
    for name, items in sets.items():
        kinds = Counter(it.get("kind") or kind_of(decls.get(it["a"][0], ("",))[0]) for it in items)
        total += kinds
        mix = ", ".join(f"{k} {v}" for k, v in kinds.most_common())
        print(f"{name}: {len(items)} items ({mix})")
    n = sum(total.values())
    print(f"all: {n} items (" + ", ".join(f"{k} {v / n:.0%}" for k, v in total.most_common()) + ")")
    found = problems(sets, decls)
    for p in found:
        print(p)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
