"""Fixtures of the retrieval tests."""

from pathlib import Path

import pytest
from sqlalchemy import select

from math2.importers.mathlib import import_lean_library
from math2.retrieval.index import build_index
from math2.sources import load_manifest, sync_manifest
from math2.store import Crosswalk, Mention, Node, Pin, Source, Store
from tests.conftest import REPO

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "leanproj"


def with_library(store: Store, library: Path = FIX) -> Store:
    """`store` with the manifest's sources and the Lean project `library` imported as Mathlib."""
    manifest = load_manifest(REPO / "manifests" / "sources.yaml")
    with store.session() as s:
        sync_manifest(s, manifest)
    import_lean_library(store, manifest.get("mathlib"), library)
    return store


def library_store(folder: Path, library: Path) -> Store:
    """A new SQLite store in `folder` holding the Lean project `library` as Mathlib."""
    store = Store(f"sqlite:///{folder / 'math2.db'}")
    store.upgrade()
    return with_library(store, library)


@pytest.fixture
def store(sqlite_store):
    return with_library(sqlite_store)


# set.mm-like declarations: what a Mathlib user would call noise for a Lean query.
SETMM = [
    ("1p1e2", "|- ( 1 + 1 ) = 2", "One plus one equals two."),
    ("2p2e4", "|- ( 2 + 2 ) = 4", "Two plus two equals four."),
    ("addcom", "|- ( ( A e. CC /\\ B e. CC ) -> ( A + B ) = ( B + A ) )", "Addition commutes."),
    ("ax-mp", "|- ps", "Rule of modus ponens: detachment."),
]


@pytest.fixture
def two_libraries(store, tmp_path: Path):
    """The fixture project's Mathlib and a few set.mm declarations, both indexed: (store, the
    index folder)."""
    with store.session() as s:
        src = s.scalar(select(Source).where(Source.name == "setmm"))
        pin = s.scalar(select(Pin).where(Pin.source_id == src.id))
        for label, stmt, comment in SETMM:
            s.add(
                Mention(
                    source_id=src.id, pin_id=pin.id, name=label, kind="theorem",
                    statement=stmt, docstring=comment, licence="CC0-1.0",
                    intake_class="open_text", authored="human",
                )
            )  # fmt: skip
        s.commit()
    root = tmp_path / "index"
    build_index(store, root / "mathlib", "mathlib", mathlib_dir=FIX)
    build_index(store, root / "setmm", "setmm")
    return store, root


def link_node(store, name: str, key: str, title: str, bind: bool = False) -> int:
    """A node with a crosswalk edge to the Mathlib declaration `name` (and, with `bind`, the
    declaration's node set to it); its id."""
    with store.session() as s:
        m = s.scalar(select(Mention).where(Mention.name == name))
        src = s.scalar(select(Source).where(Source.name == "mathlib"))
        node = Node(key=key, title=title)
        s.add(node)
        s.flush()
        if bind:
            m.node_id = node.id
        s.add(Crosswalk(node_id=node.id, system="lean4", target=m.name, mention_id=m.id,
                        source_id=src.id))  # fmt: skip
        s.commit()
        return node.id
