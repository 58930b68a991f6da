"""Which rule a store's library tables were read under, and the refusal of stale ones.

The store's tables (`math2.lean.library.store_tables`) answer from what an import wrote: which
mentions are visible (`allow_completion`: false for a private declaration, for a private
structure's fields, and for a private name that a public one of the same full name replaces).
A rule that changes those rows changes nothing in a store imported before it: its rows stay as
the older rule wrote them until the library is imported again. So each Lean library's import
records the rule it wrote under (`tables_rule` in its run's params, `lean_write.write_library`),
and a verdict with the store's tables is refused while any of the system's libraries was
imported under a rule whose rows this math2 does not read (fail closed: a stale row can hide a
name, and so a `shadowing` flag).

A lean_scout import reads Lean's own `allowCompletion`, exact under every rule: it is read as
it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from math2.errors import Math2Error

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

# The rules whose imports this math2's tables read. A change of `TABLES_RULE` that changes what
# an import writes leaves its predecessor out; one that changes only how rows are read keeps it.
READS_IMPORTS_OF = frozenset({"tables-3"})
SCOUT_ROUTE = "lean_scout"  # `mathlib.read_lean_scout`'s route: Lean's own flag


@dataclass(frozen=True)
class StaleImport:
    """A Lean library of the store imported under a rule the tables do not read."""

    source: str
    pin: str
    rule: str | None  # None: imported before the rule was recorded (tables-2 or earlier)

    def describe(self) -> str:
        was = self.rule or "tables-2 or earlier (not recorded then)"
        return f"{self.source}@{self.pin}: tables were read under {was}"


class StaleTables(Math2Error):
    """The store's library tables were written under a rule this math2 does not read."""

    def __init__(self, stale: list[StaleImport], current: str):
        self.stale = stale
        names = " ".join(dict.fromkeys(x.source for x in stale))
        first = stale[0].source
        super().__init__(
            f"re-import {names}: "
            + "; ".join(x.describe() for x in stale)
            + f", and this math2 reads them under {current} (a private structure's fields are "
            "private; a public name wins over a private one). A verdict with those rows could "
            "miss a library name, so none is given: run `math2 import "
            f"{first} --force` (or `math2 build`) to read the library again"
        )


def stale_imports(s: Session, system: str = "lean4") -> list[StaleImport]:
    """The Lean libraries of `system` with active mentions whose import at the current pin
    (a `lean_write.write_library` import: its run records a route) was written under a rule
    outside `READS_IMPORTS_OF`."""
    from math2.importers.runs import import_identity
    from math2.runs.lifecycle import find_run
    from math2.store.models import Mention, Pin, Source

    rows = s.execute(
        select(Source.name, Pin.key)
        .join(Pin, (Pin.source_id == Source.id) & Pin.is_current.is_(True))
        .where(Source.system == system)
        .where(
            select(Mention.id)
            .where(Mention.source_id == Source.id, Mention.status == "active")
            .exists()
        )
        .order_by(Source.name)
    ).all()
    out: list[StaleImport] = []
    for name, pin in rows:
        run = find_run(s, import_identity(name, pin))
        params = (run.params or {}) if run is not None else {}
        if "route" not in params or params["route"] == SCOUT_ROUTE:
            continue  # not a Lean library's import, or Lean's own flag
        rule = params.get("tables_rule")
        if rule not in READS_IMPORTS_OF:
            out.append(StaleImport(name, pin, rule))
    return out


def refuse_stale(s: Session, current: str, system: str = "lean4") -> None:
    """Raise StaleTables when a library of `system` was imported under a rule not read."""
    if stale := stale_imports(s, system):
        raise StaleTables(stale, current)
