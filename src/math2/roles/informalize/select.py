"""`--limit N` from the store without loading the library: the dependency closure of a selection;
`--names`: the named declarations only.

The first N declarations of the library (in the store's module order) are the seed; the modules
holding them are read, each declaration's deps resolved against the library's names (one column
read), and the modules of deps not yet read are read in turn until the closure of the seed is
complete. The closure is put in dependency order and the run is its first N declarations, so
every declaration of the run comes after everything of the library it uses. Each declaration is
read with its whole module, so its context (the declarations before it in its module) is the one
a run over the whole library gives it, and so are its prompts and cache keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from math2.roles.informalize.records import Decl
from math2.roles.informalize.sources import KINDS, dependency_order, resolve_deps
from math2.roles.informalize.sources import _with_context as with_context

CHUNK = 500  # names or modules per IN (…) query


def _informalizable(library: str):
    from math2.store.models import Mention, Source

    return (
        Source.name == library,
        Mention.status == "active",
        Mention.statement.is_not(None),
        Mention.statement != "",
        or_(Mention.kind.is_(None), Mention.kind == "", Mention.kind.in_(KINDS)),
    )


def _chunks(values: Iterable[str]) -> Iterable[list[str]]:
    vals = sorted(values)
    for i in range(0, len(vals), CHUNK):
        yield vals[i : i + CHUNK]


def _in_modules(column: Any, chunk: list[str]) -> Any:
    """`column` is one of these modules; "" stands for a declaration with no module (a dataset
    without a module column stores NULL), which `IN` alone never matches."""
    if "" in chunk:
        return or_(column.in_(chunk), column.is_(None))
    return column.in_(chunk)


def _modules(s: Session, library: str, modules: Iterable[str]) -> list[Decl]:
    """Every informalizable declaration of these modules, in the store's order, with context."""
    from math2.store.models import ConstDep, Mention, Source

    out: list[Decl] = []
    for chunk in _chunks(modules):
        rows = s.execute(
            select(Mention, ConstDep.deps)
            .join(Source, Source.id == Mention.source_id)
            .outerjoin(ConstDep, ConstDep.mention_id == Mention.id)
            .where(*_informalizable(library), _in_modules(Mention.module, chunk))
            .order_by(Mention.module, Mention.id)
        )
        out += [Decl.of_mention(m, deps, library) for m, deps in rows]
    return with_context(out)


def closure_from_store(s: Session, library: str, limit: int) -> list[Decl]:
    """The first `limit` declarations of the dependency order of the closure of the library's
    first `limit` declarations (see the module's docstring)."""
    from math2.store.models import Mention, Source

    names = set(
        s.scalars(
            select(Mention.name)
            .join(Source, Source.id == Mention.source_id)
            .where(*_informalizable(library))
        )
    )
    seed = list(
        s.execute(
            select(Mention.name, Mention.module)
            .join(Source, Source.id == Mention.source_id)
            .where(*_informalizable(library))
            .order_by(Mention.module, Mention.id)
            .limit(limit)
        )
    )
    loaded: dict[str, Decl] = {}
    read: set[str] = set()
    wanted = {n for n, _ in seed}
    todo_modules = {m or "" for _, m in seed}
    needed: set[str] = set()
    while todo_modules:
        fresh = _modules(s, library, todo_modules)
        read |= todo_modules
        resolve_deps(fresh, names)
        for d in fresh:
            loaded.setdefault(d.id, d)
        # walk the deps of what is needed; note the modules of deps not read yet
        stack = [n for n in wanted if n in loaded and n not in needed]
        missing: set[str] = set()
        while stack:
            n = stack.pop()
            if n in needed:
                continue
            needed.add(n)
            for dep in loaded[n].deps:
                if dep in needed or dep not in names:
                    continue
                if dep in loaded:
                    stack.append(dep)
                else:
                    missing.add(dep)
        wanted = missing
        todo_modules = _modules_of(s, library, missing) - read
    closure = sorted((loaded[n] for n in needed), key=lambda d: (d.module, d.mention_id or 0))
    return dependency_order(closure)[:limit]


def _modules_of(s: Session, library: str, names: Iterable[str]) -> set[str]:
    """The modules of these informalizable declarations ("" for one stored with none)."""
    from math2.store.models import Mention, Source

    out: set[str] = set()
    for chunk in _chunks(names):
        out |= {
            m or ""
            for m in s.scalars(
                select(Mention.module)
                .join(Source, Source.id == Mention.source_id)
                .where(*_informalizable(library), Mention.name.in_(chunk))
            )
        }
    return out


def informalizable_names(s: Session, library: str, names: Iterable[str]) -> set[str]:
    """Those of `names` that are informalizable declarations of the library."""
    from math2.store.models import Mention, Source

    found: set[str] = set()
    for chunk in _chunks(set(names)):
        found |= set(
            s.scalars(
                select(Mention.name)
                .join(Source, Source.id == Mention.source_id)
                .where(*_informalizable(library), Mention.name.in_(chunk))
            )
        )
    return found


def named_from_store(s: Session, library: str, names: Iterable[str]) -> list[Decl]:
    """The named declarations of the library (`informalize --names`), each read with its whole
    module (its context and deps are those of a run over the whole library), in dependency
    order among themselves; a name that is no informalizable declaration of it is left out
    (`informalizable_names` says which)."""
    from math2.store.models import Mention, Source

    wanted = set(names)
    modules = _modules_of(s, library, wanted)
    library_names = set(
        s.scalars(
            select(Mention.name)
            .join(Source, Source.id == Mention.source_id)
            .where(*_informalizable(library))
        )
    )
    loaded = _modules(s, library, modules)
    resolve_deps(loaded, library_names)
    seen: set[str] = set()
    chosen = []
    for d in loaded:
        if d.id in wanted and d.id not in seen:
            seen.add(d.id)
            chosen.append(d)
    return dependency_order(chosen)
