"""A Lean library's declarations into the store at a pin (K6.4, K6.10): what a read route gives
(`LibraryData`: the Mathlib importer's lean_scout and source-scan routes, Batteries' scan) and
the one writer of it. The first import at a source inserts; importing at a pin that is not the
first is a bump: new declarations become new mentions, removed or renamed ones are retired with
their successor (Mathlib's deprecation aliases give it), and a changed type hash is a new
mention; an unchanged one whose visibility the reader now reads otherwise (a newer rule) takes
the new visibility. The notation commands read are stored beside them, and the run records the
rule of the library tables the rows were written under (`math2.lean.stored_rule`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select

from math2.importers.common import (
    finish_run,
    import_transaction,
    insert_mentions,
    insert_prose,
    mention_row,
)
from math2.importers.lean_notation import Notation
from math2.importers.registry import ImportResult
from math2.lean.library import TABLES_RULE
from math2.lean.stored_rule import LibraryImport
from math2.sources.manifest import SourceEntry
from math2.store import ConstDep, Mention, NotationRecord, Run, Store
from math2.util.progress import stage

WRITE_BATCH = 20_000  # mentions per INSERT (progress counts them; one transaction in all)


@dataclass
class DeclRecord:
    """A declaration as an importer read it, before it is a mention."""

    name: str
    kind: str | None
    module: str | None
    statement: str | None
    docstring: str | None
    allow_completion: bool
    type_hash: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    deps: list[str] | None = None
    successor: str | None = None  # deprecation alias target
    deprecated: bool = False


@dataclass
class LibraryData:
    """Everything one route read."""

    records: list[DeclRecord]
    counts: dict[str, int]
    notes: list[str]
    route: str
    # (module, notation) of every notation command with a symbol, in scan order: the search
    # index reads them from the store instead of scanning the checkout again (issue 45 §6)
    notations: list[tuple[str, Notation]] = field(default_factory=list)
    lean_flag: bool | None = None  # lean_scout: whether the data had Lean's allowCompletion


def _hash(type_hash: str | None, extra: dict[str, Any] | None) -> str | None:
    """The hash a bump compares: the elaborated type's, else the source statement's."""
    return type_hash or (extra or {}).get("statement_hash")


def write_library(
    store: Store, entry: SourceEntry, data: LibraryData, digest: str, path: Path
) -> ImportResult:
    """Insert (first pin) or diff against what is active (a bump, or a reread at the same pin
    in place), in one transaction."""
    # the rule the rows are written under, for the tables' reader (`math2.lean.stored_rule`)
    rule = LibraryImport(route=data.route, tables_rule=TABLES_RULE, lean_flag=data.lean_flag)
    with import_transaction(store, entry, path, digest, in_place=True, **rule.params()) as (
        s,
        src,
        pin,
        run,
    ):
        active = {
            m.name: m
            for m in s.scalars(
                select(Mention).where(Mention.source_id == src.id, Mention.status == "active")
            )
        }
        # a reread at this pin in place (`common.import_transaction`: people bound mentions of
        # it) is no bump: the rows are this pin's, read again as a bump reads them
        again = any(m.pin_id == pin.id for m in active.values())
        new_records: list[DeclRecord] = []
        retire: list[tuple[Mention, str | None, str]] = []
        unchanged = revisited = 0
        for r in data.records:
            old = active.pop(r.name, None)
            if old is None:
                new_records.append(r)
            elif _hash(old.type_hash, old.extra) == _hash(r.type_hash, r.extra) and (
                old.kind == r.kind
            ):
                unchanged += 1
                if old.allow_completion != r.allow_completion:  # read under another rule
                    old.allow_completion = r.allow_completion
                    old.extra = {**(old.extra or {}), "modifiers": r.extra.get("modifiers", [])}
                    revisited += 1
            elif r.deprecated and r.successor:
                retire.append((old, r.successor, "renamed (deprecation alias)"))
                new_records.append(r)
            else:
                retire.append((old, r.name, "type hash changed"))
                new_records.append(r)
        successors = {r.name: r.successor for r in data.records if r.successor}
        for name, old in active.items():  # gone from the new data
            retire.append((old, successors.get(name), "removed"))
        bump = bool(retire or unchanged) and not again
        for old, succ, why in retire:
            old.status, old.retired_pin_id, old.successor = "retired", pin.id, succ
            old.extra = {**(old.extra or {}), "retired_because": why}
        rows = [
            mention_row(
                src,
                pin,
                r.name,
                kind=r.kind,
                module=r.module,
                statement=r.statement,
                docstring=r.docstring,
                allow_completion=r.allow_completion,
                type_hash=r.type_hash,
                extra={**r.extra, **({"successor": r.successor} if r.successor else {})},
            )
            for r in new_records
        ]
        ids: list[int] = []
        with stage(f"write {entry.name}", total=len(rows), unit="mentions") as st:
            for at in range(0, len(rows), WRITE_BATCH):  # one transaction, counted in batches
                ids += insert_mentions(s, rows[at : at + WRITE_BATCH])
                st.update(done=len(ids))
        deps = [
            dict(mention_id=mid, deps=r.deps)
            for mid, r in zip(ids, new_records, strict=True)
            if r.deps is not None
        ]
        if deps:
            s.connection().execute(insert(ConstDep.__table__), deps)
        texts = insert_prose(
            s,
            src,
            pin,
            "docstring",
            (
                (
                    mid,
                    r.docstring,
                    f"{src.title}, docstring of {r.name} ({r.module}); "
                    f"{pin.licence}; © the {src.title} contributors",
                    f"{src.title} contributors",
                )
                for mid, r in zip(ids, new_records, strict=True)
                if r.docstring
            ),
        )
        if data.notations:
            s.execute(
                insert(NotationRecord),
                [
                    dict(source_id=src.id, pin_id=pin.id, module=module, line=n.line,
                         symbol=n.symbol, atoms=list(n.atoms), kind=n.kind,
                         leading_atom=n.leading_atom, constants=list(n.constants),
                         namespace=n.namespace,
                         scoped=n.scoped, local=n.local)
                    for module, n in data.notations
                ],
            )  # fmt: skip
        touched_nodes = {old.node_id for old, _, _ in retire if old.node_id is not None}
        counts = dict(data.counts)
        counts.update(
            {
                "mentions added": len(ids),
                "mentions retired": len(retire),
                "mentions unchanged": unchanged,
                **({"mentions unchanged, visibility read again": revisited} if revisited else {}),
                "docstring texts": texts,
                **({"notation commands": len(data.notations)} if data.notations else {}),
            }
        )
        if bump:
            total = s.scalar(
                select(func.count()).select_from(Mention).where(Mention.source_id == src.id)
            )
            counts.update(
                {
                    "bump: change in active mentions": len(ids) - len(retire),
                    "bump: mention rows now": total,
                    "bump: nodes whose declarations changed": len(touched_nodes),
                    "bump: retired with a successor": sum(1 for _, succ, _ in retire if succ),
                }
            )
            s.add(
                Run(
                    job="bump",
                    key=f"{entry.name}@{pin.key}",
                    status="done",
                    stats=counts,
                    params={"path": str(path)},
                )
            )
        finish_run(run, counts)
    return ImportResult(
        source=entry.name, pin=pin.key, path=str(path), counts=counts, notes=data.notes
    )
