"""Search over declarations: `search(query, libraries=…, k=…)` → hits with their declaration and
node resolved (`searcher.py`); building and the index itself in `build.py` and `index.py`.

The names are loaded on first use, so importing a submodule stays cheap (`math2 search` starts
in a fraction of a second).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["ALL", "Declaration", "NoIndex", "NodeRef", "SearchHit", "Searcher", "search"]

if TYPE_CHECKING:
    from math2.retrieval.scope import ALL
    from math2.retrieval.searcher import (
        Declaration,
        NodeRef,
        NoIndex,
        Searcher,
        SearchHit,
        search,
    )


def __getattr__(name: str) -> object:
    if name == "ALL":
        from math2.retrieval.scope import ALL

        return ALL
    if name in __all__:
        from math2.retrieval import searcher

        return getattr(searcher, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
