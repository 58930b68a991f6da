"""The corpus store: schema, migrations and sessions."""

from math2.store.db import Store, StoreError, head_revision, make_engine, open_store
from math2.store.models import (
    Base,
    Binding,
    ConstDep,
    Crosswalk,
    LeanResult,
    Mention,
    ModelEntry,
    Node,
    Pin,
    Review,
    Run,
    RunItem,
    Source,
    TextRecord,
)

__all__ = [
    "Base",
    "Binding",
    "ConstDep",
    "Crosswalk",
    "LeanResult",
    "Mention",
    "ModelEntry",
    "Node",
    "Pin",
    "Review",
    "Run",
    "RunItem",
    "Source",
    "Store",
    "StoreError",
    "TextRecord",
    "head_revision",
    "make_engine",
    "open_store",
]
