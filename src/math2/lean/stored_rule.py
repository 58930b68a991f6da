"""Which rule a store's library tables were read under, and the refusal of stale ones.

The store's tables (`math2.lean.library.store_tables`) answer from what an import wrote: which
mentions are visible (`allow_completion`: false for a private declaration, for a private
structure's fields, and for a private name that a public one of the same full name replaces).
A rule that changes those rows changes nothing in a store imported before it: its rows stay as
the older rule wrote them until the library is imported again. So each Lean library's import
records the rule it wrote under (`LibraryImport`, in its run's params: `lean_write.write_library`),
and a verdict with the store's tables is refused while any of the system's libraries has active
mentions whose import wrote them under a rule this math2 does not read (fail closed: a stale row
can hide a name, and so a `shadowing` flag).

The rule of a library's rows is the rule of its latest finished import, at whichever pin: a
first import writes every row, a bump (and a reread at the same pin) reads every active row's
visibility again. A library (a `kind: library` source, or one a library import wrote) with
active mentions and no such import recorded is stale: an import not yet run, killed or failed
at a newer pin changes nothing, and the rows stay those of the older import.

A lean_scout import reads Lean's own `allowCompletion`, exact under every rule, when its data
has that column (`lean_flag`); the older mathlib-types schema without it keeps every constant,
private ones as visible names, and is stale under every rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy import select

from math2.errors import Math2Error

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

# The rules whose imports this math2's tables read. A change of `TABLES_RULE` that changes what
# an import writes leaves its predecessor out; one that changes only how rows are read keeps it.
READS_IMPORTS_OF = frozenset({"tables-3"})
SCOUT_ROUTE = "lean_scout"  # `mathlib.read_lean_scout`'s route: Lean's own flag
NO_FLAG = "lean_scout data without allowCompletion (private names stored as visible)"


class LibraryImport(BaseModel):
    """What a Lean library's import records in its run's params for the tables' reader."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    route: str  # the read route: lean_scout, or a source scan
    tables_rule: str  # `math2.lean.library.TABLES_RULE` when the rows were written
    # lean_scout only: whether the data had Lean's allowCompletion (None: not recorded)
    lean_flag: bool | None = None

    def params(self) -> dict[str, Any]:
        return self.model_dump()

    def exact(self) -> bool:
        """Whether rows written by this import are read as they are by this math2."""
        if self.route == SCOUT_ROUTE:
            return self.lean_flag is True
        return self.tables_rule in READS_IMPORTS_OF


@dataclass(frozen=True)
class StaleImport:
    """A Lean library of the store whose active rows were written under a rule not read."""

    source: str
    pin: str | None  # the pin of the import that wrote them; None: no library import recorded
    rule: str | None  # None: not recorded (tables-2 or earlier)

    def describe(self) -> str:
        if self.pin is None:
            return (
                f"{self.source}: no finished import records the rule of its active mentions "
                "(imported by a math2 before the rule was recorded, or its run rows are gone)"
            )
        was = self.rule or "tables-2 or earlier (not recorded then)"
        return f"{self.source}@{self.pin}: tables were read under {was}"


class StaleTables(Math2Error):
    """The store's library tables were written under a rule this math2 does not read."""

    def __init__(self, stale: list[StaleImport], current: str):
        self.stale = stale
        names = list(dict.fromkeys(x.source for x in stale))
        commands = ", ".join(f"`math2 import {n}`" for n in names)
        super().__init__(
            f"re-import {' '.join(names)}: "
            + "; ".join(x.describe() for x in stale)
            + f", and this math2 reads them under {current} (a private structure's fields are "
            "private; a public name wins over a private one). A verdict with those rows could "
            f"miss a library name, so none is given: run {commands} (add `--force` where it "
            "answers that the data is imported already; or `math2 build`) to read each library "
            "again at its pin (mentions people bound are read again in place; a lean_scout "
            "folder needs allowCompletion in mathlib-types, else import a checkout)"
        )


def _parse(params: dict[str, Any] | None) -> LibraryImport | None:
    """The recorded rule of a library import's params; None when it is not one (no route).
    A route without a valid rule is a library import of unknown rule: stale."""
    params = params or {}
    if "route" not in params:
        return None
    try:
        return LibraryImport.model_validate(params)
    except ValidationError:
        return LibraryImport(route=str(params["route"]), tables_rule="?")


def _latest(done: tuple[Any, LibraryImport]) -> tuple[bool, Any, int]:
    """The order of finished runs: by when they finished, then by id."""
    run = done[0]
    return (run.finished_at is not None, run.finished_at, run.id)


def stale_imports(s: Session, system: str = "lean4") -> list[StaleImport]:
    """The Lean libraries of `system` with active mentions whose latest finished library import
    (any pin: the one whose rule the rows are read under) is missing or was written under a rule
    outside `READS_IMPORTS_OF`."""
    from math2.store.models import Mention, Pin, Source
    from math2.store.work import Run, RunStatus

    sources = s.execute(
        select(Source.id, Source.name, Source.kind)
        .where(Source.system == system)
        .where(
            select(Mention.id)
            .where(Mention.source_id == Source.id, Mention.status == "active")
            .exists()
        )
        .order_by(Source.name)
    ).all()
    out: list[StaleImport] = []
    for sid, name, kind in sources:
        keys = {f"{name}@{k}": k for k in s.scalars(select(Pin.key).where(Pin.source_id == sid))}
        runs = s.scalars(
            select(Run).where(
                Run.job == "import", Run.status == RunStatus.DONE, Run.key.in_(list(keys))
            )
        ).all()
        done = [(r, rec) for r in runs if (rec := _parse(r.params)) is not None]
        if not done:
            if kind == "library":  # a library whose rows no recorded import wrote: fail closed
                out.append(StaleImport(name, None, None))
            continue
        run, rec = max(done, key=_latest)
        if not rec.exact():
            rule = NO_FLAG if rec.route == SCOUT_ROUTE else rec.tables_rule
            out.append(StaleImport(name, keys[run.key], rule if rule != "?" else None))
    return out


def refuse_stale(s: Session, current: str, system: str = "lean4") -> None:
    """Raise StaleTables when a library of `system` was imported under a rule not read."""
    if stale := stale_imports(s, system):
        raise StaleTables(stale, current)
