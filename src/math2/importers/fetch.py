"""A library's source at its pinned commit for `math2 build` and the importers: the shallow git
fetch of `math2.data.git`, where it lives below the importers (the external data sets use it
too)."""

from __future__ import annotations

from math2.data.git import FetchError, cached_checkout, fetch_pinned, head_commit

__all__ = ["FetchError", "cached_checkout", "fetch_pinned", "head_commit"]
