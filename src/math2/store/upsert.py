"""INSERT … ON CONFLICT on both store backends (SQLite and PostgreSQL), written once.

Every "first writer wins" row (a model reply, a Lean result, an attempt, a run) and every
upsert (a run item's state) goes through `insert_ignore` or `upsert`: one compiled statement per
table, dialect and column set, the values passed as parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

_INSERTS = {"postgresql": pg_insert, "sqlite": sqlite_insert}


def _insert(dialect: str, table: Table):
    try:
        return _INSERTS[dialect](table)
    except KeyError:
        raise ValueError(f"a store is SQLite or PostgreSQL, not {dialect}") from None


@lru_cache(maxsize=64)
def conflict_stmt(
    dialect: str,
    table: Table,
    keys: tuple[str, ...] | None = None,
    update: tuple[str, ...] = (),
    returning: tuple[str, ...] = (),
):
    """The statement: insert a row; on a conflict on `keys` (any unique constraint when None),
    do nothing, or set the `update` columns to the new row's values. `returning` names columns
    to return (from a row written now; nothing when the insert was ignored)."""
    ins = _insert(dialect, table)
    if update:
        if not keys:
            raise ValueError("an upsert names the columns of the constraint it updates on")
        stmt = ins.on_conflict_do_update(
            index_elements=list(keys), set_={c: ins.excluded[c] for c in update}
        )
    else:
        stmt = ins.on_conflict_do_nothing(index_elements=list(keys) if keys else None)
    if returning:
        stmt = stmt.returning(*(table.c[c] for c in returning))
    return stmt


def _table(table: Any) -> Table:
    return getattr(table, "__table__", table)


def insert_ignore(
    session: Session,
    table: Any,
    values: dict[str, Any],
    *,
    keys: Sequence[str] | None = None,
    returning: str | None = None,
) -> Any:
    """Insert `values` into `table` (a Table or a mapped class) unless a row with the same key is
    there (the first writer wins). With `returning`, that column of the row written now, or None
    when the row was there before."""
    stmt = conflict_stmt(
        session.get_bind().dialect.name,
        _table(table),
        tuple(keys) if keys else None,
        (),
        (returning,) if returning else (),
    )
    if returning:
        return session.scalar(stmt, values)
    session.execute(stmt, values)
    return None


def upsert(
    session: Session,
    table: Any,
    values: dict[str, Any],
    *,
    keys: Sequence[str],
    update: Sequence[str],
) -> None:
    """Insert `values`, or set the `update` columns of the row with the same `keys`."""
    stmt = conflict_stmt(session.get_bind().dialect.name, _table(table), tuple(keys), tuple(update))
    session.execute(stmt, values)
