"""The store on SQLite and PostgreSQL: migrations, constraints, transactions."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from math2.store import (
    Base,
    Binding,
    Crosswalk,
    Mention,
    ModelEntry,
    Node,
    Pin,
    Review,
    Run,
    RunItem,
    Source,
    Store,
    StoreError,
    TextRecord,
    head_revision,
    open_store,
)
from tests.seeding import add_pin, add_source, mention_of


def _source(s, name="lib") -> tuple[Source, Pin]:
    src = add_source(
        s, name, title="L", licence="MIT", intake_class="open_text", route="scan", decided_by="Q2"
    )
    return src, add_pin(s, src, "abc", commit="abc")


def _mention(src, pin, name="Nat.add_comm", **kw) -> Mention:
    return mention_of(src, pin, name, **kw)


def test_migrations_reach_head_and_match_the_models(store: Store) -> None:
    assert store.current_revision() == head_revision()
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_upgrade_is_idempotent(store: Store) -> None:
    store.upgrade()
    assert store.current_revision() == head_revision()


def test_open_without_migration_refuses_an_empty_store(store_url: str) -> None:
    with pytest.raises(StoreError, match="math2 init"):
        open_store(store_url)
    open_store(store_url, migrate=True).close()
    open_store(store_url).close()


def test_a_whole_row_of_the_corpus(store: Store) -> None:
    with store.session() as s:
        src, pin = _source(s)
        node = Node(key="wd:Q11518", wikidata="Q11518", title="Pythagorean theorem")
        s.add(node)
        s.flush()
        m = _mention(
            src, pin, docstring="Pythagoras", type_hash="h1", node_id=node.id, outcome="node"
        )
        s.add(m)
        s.flush()
        review = Review(
            target_table="bindings", target_id=0, reviewer="A. Person", verdict="confirmed"
        )
        s.add(review)
        s.flush()
        s.add(Binding(node_id=node.id, mention_id=m.id, status="confirmed", review_id=review.id))
        s.add(Crosswalk(node_id=node.id, system="metamath", target="pythag", source_id=src.id))
        model = ModelEntry(name="org/model-7b", revision="r1", provider="vllm")
        s.add(model)
        s.flush()
        s.add(
            TextRecord(
                node_id=node.id,
                role="statement",
                body="In a right triangle …",
                licence="CC-BY-SA-4.0",
                attribution="math2 informalize",
                author_kind="agent",
                model_id=model.id,
                prompt_hash="p" * 64,
            )
        )
        s.add(
            TextRecord(
                mention_id=m.id,
                role="docstring",
                body="Pythagoras",
                licence="MIT",
                attribution="Mathlib contributors",
                author_kind="person",
            )
        )
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(TextRecord)) == 2
        node = s.scalar(select(Node).where(Node.wikidata == "Q11518"))
        assert s.scalar(select(Binding.status).where(Binding.node_id == node.id)) == "confirmed"


def test_agent_text_must_name_a_registered_model_and_prompt(store: Store) -> None:
    with store.session() as s:
        src, pin = _source(s)
        m = _mention(src, pin)
        s.add(m)
    with pytest.raises(IntegrityError), store.session() as s:
        s.add(
            TextRecord(
                mention_id=m.id,
                role="statement",
                body="x",
                licence="MIT",
                attribution="?",
                author_kind="agent",
            )
        )
    with pytest.raises(IntegrityError), store.session() as s:
        s.add(
            TextRecord(
                mention_id=m.id,
                role="statement",
                body="x",
                licence="MIT",
                attribution="?",
                author_kind="agent",
                model_id=999,
                prompt_hash="p",
            )
        )


def test_failed_transaction_leaves_stored_data_untouched(store: Store) -> None:
    with store.session() as s:
        src, pin = _source(s)
        s.add(_mention(src, pin, name="kept"))
    with pytest.raises(RuntimeError), store.session() as s:
        s.add(_mention(src, pin, name="lost"))
        s.flush()
        raise RuntimeError("killed half-way")
    with store.session() as s:
        assert s.scalars(select(Mention.name)).all() == ["kept"]


@pytest.mark.parametrize(
    "row",
    [
        lambda src, pin: Mention(
            source_id=src.id,
            pin_id=pin.id,
            name="x",
            licence="MIT",
            intake_class="open_text",
            authored="robot",
        ),
        lambda src, pin: Mention(
            source_id=src.id,
            pin_id=pin.id,
            name="x",
            licence="MIT",
            intake_class="open_text",
            authored="human",
            status="gone",
        ),
        lambda src, pin: Pin(
            source_id=src.id, key="abc", licence="MIT", intake_class="x", decided_by="dup"
        ),
        lambda src, pin: Review(target_table="t", target_id=1, reviewer="p", verdict="maybe"),
        lambda src, pin: Mention(
            source_id=src.id,
            pin_id=10_000,
            name="x",
            licence="MIT",
            intake_class="open_text",
            authored="human",
        ),
    ],
    ids=["authored", "status", "duplicate-pin", "verdict", "foreign-key"],
)
def test_constraints(store: Store, row) -> None:
    with store.session() as s:
        src, pin = _source(s)
    with pytest.raises(IntegrityError), store.session() as s:
        s.add(row(src, pin))


def test_run_items_are_unique_per_run(store: Store) -> None:
    with store.session() as s:
        run = Run(job="import", key="setmm@55fe226", params={"path": "set.mm"})
        s.add(run)
        s.flush()
        s.add(RunItem(run_id=run.id, item="chunk-1", result={"n": 3}))
    with pytest.raises(IntegrityError), store.session() as s:
        s.add(RunItem(run_id=run.id, item="chunk-1"))
    with store.session() as s:
        assert s.scalar(select(RunItem.result).where(RunItem.item == "chunk-1")) == {"n": 3}


def test_deleting_a_source_cascades_to_its_pins_and_mentions(store: Store) -> None:
    with store.session() as s:
        src, pin = _source(s)
        s.add(_mention(src, pin))
    with store.session() as s:
        s.delete(s.get(Source, src.id))
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Mention)) == 0
        assert s.scalar(select(func.count()).select_from(Pin)) == 0
