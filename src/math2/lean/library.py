"""The pinned library's name table for hygiene: whether Mathlib (as the store holds it, active
declarations of the `lean4` libraries) declares a name. A benchmark's context that declares or
binds such a name is flagged `shadowing`; a model's `variable` named like one that the statement
mentions is refused. `make_checker` fills it from the store it is given."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from sqlalchemy import select

if TYPE_CHECKING:
    from math2.store import Store


class LibraryNames:
    """`names(name) -> bool`: one indexed lookup per name, remembered."""

    def __init__(self, store: Store, system: str = "lean4"):
        self.store = store
        self.system = system
        self.known = lru_cache(maxsize=65_536)(self._lookup)

    def __call__(self, name: str) -> bool:
        return bool(name) and self.known(name)

    def _lookup(self, name: str) -> bool:
        from math2.store.models import Mention, Source

        with self.store.session() as s:
            hit = s.scalar(
                select(Mention.id)
                .join(Source, Source.id == Mention.source_id)
                .where(Source.system == self.system, Mention.name == name)
                .where(Mention.status == "active")
                .limit(1)
            )
        return hit is not None
