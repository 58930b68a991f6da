"""The sets `benchmarks/retrieval.py` measures, each item a query with its relevant
declarations, and each item's target kind.

- `titles`: a seeded half of the theorem lists' titles (`lists`, `split_lists`);
- the written sets of `benchmarks/devsets/*.yaml` (`written`; README.md there);
- `docstrings`: a seeded held-out split of Mathlib docstrings (`docstring_split`);
- `premises`: miniF2F / ProofNet informal statements → the constants they use (`premises`).

Target kinds (`kinds`): recorded by the issue-33 sets, else the store's kind of the first answer
the index has (written sets) or the commonest kind among the answers (the others), grouped by
`check_devsets.kind_of`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import yaml
from check_devsets import TARGET_KINDS, kind_of
from sqlalchemy import select

from math2.store import Mention, Source, Store

_IDENT = re.compile(r"[A-Za-z_][\w.'!?]*")
_OPEN = re.compile(r"^open\s+(.+)$", re.M)

Item = tuple[str, str, set[str]]  # (id, query, relevant names)


def premises(data: Path, names: set[str]) -> list[Item]:
    items = []
    for f in ("minif2f.jsonl", "proofnet.jsonl"):
        for line in (data / f).read_text().splitlines():
            it = json.loads(line)
            opens = [ns for ln in _OPEN.findall(it.get("header", "")) for ns in ln.split()]
            rel = set()
            for t in set(_IDENT.findall(it["formal_statement"])):
                for cand in (t, *(f"{ns}.{t}" for ns in opens)):
                    if cand in names:
                        rel.add(cand)
                        break
            q = (it.get("informal_prefix") or it.get("informal_statement") or "").strip()
            q = q.replace("/--", "").replace("-/", "").strip()
            if rel and q:
                items.append((it["name"], q, rel))
    return items


def lists(crosswalk: Path, names: set[str]) -> list[Item]:
    by_title: dict[str, set[str]] = {}
    for n in ("100", "1000"):
        data = yaml.safe_load((crosswalk / "mathlib-docs" / f"{n}.yaml").read_text())
        for v in data.values():
            if isinstance(v, dict) and v.get("title"):
                decls = ([v["decl"]] if v.get("decl") else []) + list(v.get("decls") or [])
                by_title.setdefault(v["title"].strip(), set()).update(decls)
    for page in sorted((crosswalk / "1000-plus" / "_thm").glob("*.md")):
        parts = page.read_text().split("---")
        front = yaml.safe_load(parts[1]) or {}
        title = next((ln[2:].strip() for ln in parts[1].splitlines() if ln.startswith("# ")), "")
        for e in front.get("lean") or []:
            if e.get("library") == "L" and title:
                by_title.setdefault(title, set()).update(e.get("identifiers") or [])
    return [(t, t, rel & names) for t, rel in sorted(by_title.items()) if rel & names]


def docstring_split(db: str, n: int, seed: int) -> tuple[list[Item], set[int]]:
    """`n` declarations with a docstring of at least 40 characters, chosen by a seeded hash."""
    store = Store(db)
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        rows = s.execute(
            select(Mention.id, Mention.name, Mention.docstring).where(
                Mention.source_id == src.id,
                Mention.status == "active",
                Mention.allow_completion.is_(True),
                Mention.docstring.is_not(None),
            )
        ).all()

    def key(name: str) -> str:
        return hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()

    chosen = sorted((r for r in rows if len(r[2]) >= 40), key=lambda r: key(r[1]))[:n]
    return [(r[1], r[2], {r[1]}) for r in chosen], {r[0] for r in chosen}


def written(folder: Path, names: set[str]) -> dict[str, list[Item]]:
    """The dev sets written for issue 24 (`benchmarks/devsets/*.yaml`: natural-language
    descriptions, Lean-style and LaTeX-style queries), targets present in the index only."""
    out = {}
    for f in sorted(folder.glob("*.yaml")):
        items = yaml.safe_load(f.read_text())
        out[f.stem] = [
            (it["q"], it["q"], set(it["a"]) & names) for it in items if set(it["a"]) & names
        ]
    return out


def split_lists(items: list[Item], seed: int) -> tuple[list[Item], set[str]]:
    """A seeded half of the title queries as the dev set; its targets' list titles are kept
    out of the search aids (the other half's titles stay in as aids and are not measured)."""

    def key(title: str) -> str:
        return hashlib.sha256(f"lists:{seed}:{title}".encode()).hexdigest()

    dev = [it for it in items if key(it[0]) < "8"]
    return dev, {n for _, _, rel in dev for n in rel}


def kinds(
    sets: dict[str, list[Item]], folder: Path, names: set[str], decl_kinds: dict[str, str]
) -> dict[str, list[str]]:
    """Each set's target kinds, aligned with its items (see the module docstring)."""
    out = {}
    for f in sorted(folder.glob("*.yaml")):
        if f.stem not in sets:
            continue
        found = []
        for it in yaml.safe_load(f.read_text(encoding="utf-8")) or []:
            present = [a for a in it["a"] if a in names]
            if present:
                found.append(it.get("kind") or kind_of(decl_kinds.get(present[0])))
        out[f.stem] = found
    for name, items in sets.items():
        if name not in out:
            out[name] = [_commonest(rel, decl_kinds) for _, _, rel in items]
    return out


def _commonest(rel: set[str], decl_kinds: dict[str, str]) -> str:
    c = Counter(kind_of(decl_kinds.get(a)) for a in rel)
    order = {k: i for i, k in enumerate(TARGET_KINDS)}
    return min(c, key=lambda k: (-c[k], order.get(k, len(order))))
