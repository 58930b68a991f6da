"""Node selection (K6.4) on the fixture Lean project."""

from pathlib import Path

import yaml
from sqlalchemy import select

from math2.crosswalk.cluster import cluster
from math2.crosswalk.select import select_nodes
from math2.importers.mathlib import import_lean_library
from math2.importers.theorem_lists import import_mathlib_lists
from math2.sources import load_manifest, sync_manifest
from math2.store import Mention, Node
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def test_the_four_signals(sqlite_store, tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "manifests" / "sources.yaml").read_text())
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    manifest = load_manifest(path)
    with sqlite_store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(sqlite_store, manifest.get("mathlib"), FIX)
    lists = tmp_path / "100.yaml"
    lists.write_text("1:\n  title: Commutativity\n  decl: Demo.add_comm'\n")
    import_mathlib_lists(sqlite_store, manifest.get("mathlib-theorem-lists"), lists)
    with sqlite_store.session() as s:
        cluster(s)
        rep = select_nodes(s, "mathlib", ["Demo.idf_apply", "No.such.decl"])
        assert rep.theorem_lists == 1  # Demo.add_comm' through the 100 list
        assert rep.module_doc_main_results == 0  # the same declaration, already a node
        assert rep.requested_or_bound == 1 and rep.not_found_requests == ["No.such.decl"]
        assert rep.statement_definitions == 1  # `idf` in the statement of Demo.idf_apply
        idf = s.scalar(select(Mention).where(Mention.name == "Demo.idf"))
        node = s.get(Node, idf.node_id)
        assert (node.key, node.selected_by, idf.outcome) == (
            "decl:mathlib:Demo.idf",
            "statement dependency",
            "node",
        )
        again = select_nodes(s, "mathlib", ["Demo.idf_apply"])
        assert again.statement_definitions == 0 and again.requested_or_bound == 0
