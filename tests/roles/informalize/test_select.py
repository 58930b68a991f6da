"""`informalize --limit N` from the store reads only the dependency closure of its selection."""

from __future__ import annotations

from sqlalchemy import select

from math2.roles.informalize import select as sel
from math2.roles.informalize.job import InformalizeOptions, load_decls
from math2.roles.informalize.sources import decls_from_store, dependency_order
from math2.store import Mention, Pin, Source

MENTIONS = [  # module, name, statement (deps are read from the statements' identifiers)
    ("A", "A.x", "(n : ℕ) : B.y n = n"),
    ("A", "A.z", ": True"),
    ("A", "A.u", "(n : ℕ) : A.x n"),
    ("B", "B.y", "(n : ℕ) : C.w = n"),
    ("B", "B.other", ": False"),
    ("C", "C.w", ": ℕ"),
    *(("D", f"D.k{i}", f"(n : ℕ) : n = {i}") for i in range(5)),
]


def _seed(store) -> None:
    with store.session() as s:
        src = Source(
            name="toylib", title="toy", system="lean4", kind="library", licence="Apache-2.0",
            authored="human", authored_reason="test", route="test", intake_class="open_text",
            decided_by="test", manifest_digest="0" * 64,
        )  # fmt: skip
        s.add(src)
        s.flush()
        pin = Pin(
            source_id=src.id, key="toy@1", licence="Apache-2.0", intake_class="open_text",
            decided_by="test",
        )  # fmt: skip
        s.add(pin)
        s.flush()
        for module, name, stmt in MENTIONS:
            s.add(
                Mention(
                    source_id=src.id,
                    pin_id=pin.id,
                    name=name,
                    kind="theorem",
                    module=module,
                    statement=stmt,
                    licence="Apache-2.0",
                    intake_class="open_text",
                    authored="human",
                )
            )


def test_limit_reads_the_closure_in_dependency_order(sqlite_store, monkeypatch):
    _seed(sqlite_store)
    read: list[set[str]] = []
    real = sel._modules

    def spy(s, library, modules):
        read.append(set(modules))
        return real(s, library, modules)

    monkeypatch.setattr(sel, "_modules", spy)
    opts = InformalizeOptions(model="m", translator="m", library="toylib", limit=3)
    decls = load_decls(sqlite_store, opts)
    # the seed is A.x, A.z, A.u; their closure adds B.y and C.w (not B.other, not module D)
    assert set().union(*read) == {"A", "B", "C"}
    assert [d.id for d in decls] == ["A.z", "C.w", "B.y"]
    # each declaration comes after what it uses, and reads as in a run over the whole library
    with sqlite_store.session() as s:
        full = {d.id: d for d in decls_from_store(s, "toylib")}
    for d in decls:
        assert d.deps == full[d.id].deps and d.context == full[d.id].context
    seen: set[str] = set()
    for d in decls:
        assert set(d.deps) <= seen
        seen.add(d.id)
    # a larger limit: the whole closure of the larger seed, still in dependency order
    opts = InformalizeOptions(model="m", translator="m", library="toylib", limit=6)
    ids = [d.id for d in load_decls(sqlite_store, opts)]
    assert ids == [d.id for d in dependency_order([full[i] for i in ids])]
    assert set(ids) == {"A.x", "A.z", "A.u", "B.y", "C.w", "B.other"}


def test_no_limit_reads_the_library(sqlite_store):
    _seed(sqlite_store)
    opts = InformalizeOptions(model="m", translator="m", library="toylib")
    decls = load_decls(sqlite_store, opts)
    assert len(decls) == len(MENTIONS)
    with sqlite_store.session() as s:
        assert s.scalar(select(Source.id).where(Source.name == "toylib")) is not None


def test_a_declaration_without_a_module_is_read(sqlite_store):
    """A dataset with no module column stores NULL modules: such a declaration is chosen by
    `--names` and read by `--limit`, as by a run over the whole library."""
    _seed(sqlite_store)
    with sqlite_store.session() as s:
        m = s.scalars(select(Mention).where(Mention.name == "C.w")).one()
        m.module = None
    with sqlite_store.session() as s:
        assert sel.informalizable_names(s, "toylib", ["C.w", "B.y"]) == {"C.w", "B.y"}
        assert [d.id for d in sel.named_from_store(s, "toylib", ["C.w", "B.y"])] == ["C.w", "B.y"]
        assert "C.w" in {d.id for d in sel.closure_from_store(s, "toylib", 6)}
