"""Declarations to informalize, and their dependency order.

From the store (a library's active mentions, with lean_scout's const_deps when imported, else
the constants the scanner reads in each statement), from a Lean source folder (the scanner), or
from lean_scout tactic data (Herald's tactic augmentation: each goal state a new statement).
`dependency_order` puts every declaration after what it uses (ties and cycles in input order).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.lean.syntax import Scope, constants_of
from math2.roles.informalize.records import Decl
from math2.util.textlimit import check_text

__all__ = [
    "decls_from_lean_dir",
    "decls_from_store",
    "decls_from_tactics",
    "dependency_order",
    "goal_statement",
    "resolve_deps",
]

KINDS = {"theorem", "lemma", "def", "abbrev", "structure", "class", "inductive", "instance"}
CONTEXT = 3


def resolve_deps(decls: list[Decl], names: set[str] | None = None) -> None:
    """Fill each declaration's deps from the constants of its statement (when it has none):
    `math2.lean.syntax.constants_of` against the set's names (or `names`, the library's, when
    given), inside the namespaces of the declaration's own name."""
    names = names if names is not None else {d.name for d in decls}
    for d in decls:
        if not d.deps:
            d.deps = sorted(constants_of(d.statement, Scope.of(d.name, names)))


def dependency_order(decls: list[Decl]) -> list[Decl]:
    """Each declaration after the declarations of the set it depends on (Kahn's algorithm;
    ties by input order; a cycle is broken at its earliest member)."""
    index = {d.id: i for i, d in enumerate(decls)}
    deps = {d.id: {x for x in d.deps if x in index and x != d.id} for d in decls}
    users: dict[str, list[str]] = {d.id: [] for d in decls}
    for d in decls:
        for x in deps[d.id]:
            users[x].append(d.id)
    missing = {d.id: len(deps[d.id]) for d in decls}
    ready = [index[d.id] for d in decls if not missing[d.id]]
    heapq.heapify(ready)
    out: list[Decl] = []
    done: set[str] = set()
    while len(out) < len(decls):
        if not ready:  # a cycle: take its earliest member
            first = min(index[i] for i in index if i not in done)
            heapq.heappush(ready, first)
            missing[decls[first].id] = 0
        i = heapq.heappop(ready)
        d = decls[i]
        if d.id in done:
            continue
        done.add(d.id)
        out.append(d)
        for u in users[d.id]:
            missing[u] -= 1
            if missing[u] == 0 and u not in done:
                heapq.heappush(ready, index[u])
    return out


def _with_context(decls: list[Decl]) -> list[Decl]:
    by_module: dict[str, list[Decl]] = {}
    for d in decls:
        by_module.setdefault(d.module, []).append(d)
    for group in by_module.values():
        for k, d in enumerate(group):
            d.context = [
                f"{e.kind} {e.name} {e.statement}"[:300] for e in group[max(0, k - CONTEXT) : k]
            ]
    return decls


def decls_from_lean_dir(root: Path, library: str = "mathlib") -> list[Decl]:
    """Named declarations of a Lean source tree (the lexical scanner), with deps resolved; a
    statement or docstring over the text limit is an InputError naming the file and line."""
    from math2.importers.lean_source import lean_files, scan_file

    root = Path(root)
    out = []
    for path in lean_files(root):
        for d in scan_file(root, path).declarations:
            if not d.name or d.kind not in KINDS or not d.statement.strip():
                continue
            check_text(d.statement, f"the statement of {d.name}", path, d.line)
            if d.docstring:
                check_text(d.docstring, f"the docstring of {d.name}", path, d.line)
            out.append(
                Decl(
                    id=d.name,
                    name=d.name,
                    kind=d.kind,
                    module=d.module,
                    statement=" ".join(d.statement.split()),
                    docstring=d.docstring,
                    library=library,
                )
            )
    resolve_deps(out)
    return _with_context(out)


def decls_from_store(s: Session, library: str, limit: int | None = None) -> list[Decl]:
    """A library's active declarations from the store; const_deps where imported."""
    from math2.store.models import ConstDep, Mention, Source

    rows = s.execute(
        select(Mention, ConstDep.deps)
        .join(Source, Source.id == Mention.source_id)
        .outerjoin(ConstDep, ConstDep.mention_id == Mention.id)
        .where(Source.name == library, Mention.status == "active")
        .order_by(Mention.module, Mention.id)
    )
    out = []
    for m, deps in rows:
        if not m.statement or (m.kind and m.kind not in KINDS):
            continue
        out.append(Decl.of_mention(m, deps, library))
    resolve_deps(out)
    out = _with_context(out)
    return out[:limit] if limit else out


_HYP = re.compile(r"^(?P<names>[^:⊢]+?)\s*:\s*(?P<type>.+)$")


def goal_statement(goal: str) -> str | None:
    """A goal state (`x : T … ⊢ P`) as a statement `(x : T) … : P`; None when it has no goal."""
    lines = goal.strip().split("\n")
    binders, target, in_target = [], [], False
    for line in lines:
        if line.startswith("⊢"):
            in_target = True
            target.append(line[1:].strip())
        elif in_target:
            target.append(line.strip())
        elif line.startswith((" ", "\t")) and binders:
            binders[-1] += " " + line.strip()  # a wrapped hypothesis
        elif (m := _HYP.match(line.strip())) is not None:
            names = " ".join(n for n in m["names"].split() if not n.endswith("✝"))
            if names:
                binders.append(f"({names} : {m['type'].strip()})")
    if not target:
        return None
    return " ".join([*binders, ":", " ".join(target)])


def decls_from_tactics(
    rows: Iterable, library: str = "mathlib", limit: int | None = None
) -> list[Decl]:
    """Herald's tactic augmentation: each goal state before a tactic, a new statement; a goal
    state over the text limit is an InputError naming the parquet file and the row."""
    out: list[Decl] = []
    seen: set[str] = set()
    for row in rows:
        for k, goal in enumerate(row.goals_before):
            at = getattr(row, "row", None)  # a TacticRow names its shard and row
            where = f"row {at}, " if at is not None else ""
            check_text(
                goal, f"{where}goal state {k + 1}", getattr(row, "shard", None) or "<tactics>"
            )
            stmt = goal_statement(goal)
            if stmt is None or stmt in seen:
                continue
            seen.add(stmt)
            name = f"{row.module or 'tactic'}.aug_{row.line or 0}_{k}"
            out.append(
                Decl(
                    id=name,
                    name=name,
                    kind="theorem",
                    module=row.module or "",
                    statement=stmt,
                    library=library,
                    origin="tactic_state",
                )
            )
            if limit and len(out) >= limit:
                return out
    return out
