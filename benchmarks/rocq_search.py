"""Search Rocq's stdlib as imported at its pin (issue 43 §2): the checkout imported into a fresh
SQLite store, its index built (lexical parts only), and each query's top 5.

    python benchmarks/rocq_search.py /path/to/stdlib ["query" …]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from math2.importers.registry import load_builtin_importers
from math2.retrieval.index import SearchIndex, build_index
from math2.sources import load_manifest, sync_manifest
from math2.store import open_store

QUERIES = ["addition is commutative on natural numbers", "Nat.add_comm"]


def main() -> None:
    root = Path(sys.argv[1])
    queries = sys.argv[2:] or QUERIES
    manifest = load_manifest(Path("manifests/sources.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/m.db", migrate=True, create=True)
        with store.session() as s:
            sync_manifest(s, manifest)
        load_builtin_importers()["rocq-stdlib"].run(store, manifest.get("rocq-stdlib"), root)
        meta = build_index(store, Path(tmp) / "ix", "rocq-stdlib", dense=False)
        index = SearchIndex(Path(tmp) / "ix")
        print(
            f"indexed {meta['count']}; functor bodies left out: "
            f"{meta.get('functor_bodies_left_out', 'n/a (not read)')}"
        )
        for q in queries:
            print(f"{q} -> {[h.name for h in index.search(q, k=5)]}")


if __name__ == "__main__":
    main()
