"""One writer and one upsert helper, on SQLite and PostgreSQL: first writer wins, upserts touch
only the columns they name, and every write of a run (the async store, the Lean result cache
from worker threads) is committed by the store's one writer thread."""

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from math2.lean.cache import ResultCache
from math2.lean.checker import CheckResult, Status
from math2.lean.identity import LeanIdentity
from math2.store import LeanResult, LLMResponse, Run, RunItem, Store
from math2.store.aio import AsyncStore
from math2.store.upsert import insert_ignore, upsert
from math2.store.writer import WriterClosed

IDENT = LeanIdentity(kind="fake-repl", lean_version="4.19.0", mathlib_commit="abc")


def _result(reason: str, status: Status = Status.OK) -> CheckResult:
    return CheckResult(id="x", status=status, passed=status is Status.OK, reason=reason)


def test_insert_ignore_keeps_the_first_row_and_returns_only_new_ids(store: Store) -> None:
    row = {"key": "k", "model": "m", "request": {}, "response": {"n": 1}}
    with store.session() as s:
        insert_ignore(s, LLMResponse, row)
        insert_ignore(s, LLMResponse, {**row, "response": {"n": 2}})
    with store.session() as s:
        assert s.get(LLMResponse, "k").response == {"n": 1}
        first = insert_ignore(s, Run, {"job": "j", "key": "a", "spec_hash": "h"}, returning="id")
        again = insert_ignore(s, Run, {"job": "j", "key": "a", "spec_hash": "h"}, returning="id")
    assert isinstance(first, int) and again is None


def test_upsert_sets_only_the_named_columns(store: Store) -> None:
    with store.session() as s:
        run_id = insert_ignore(s, Run, {"job": "j", "key": "a", "spec_hash": "h"}, returning="id")
        base = {"run_id": run_id, "item": "i", "status": "running", "error": None, "stage": "s1"}
        upsert(s, RunItem, base, keys=("run_id", "item"), update=("status",))
        upsert(
            s,
            RunItem,
            {**base, "status": "failed", "error": "boom", "stage": "s2"},
            keys=("run_id", "item"),
            update=("status", "error"),
        )
    with store.session() as s:
        item = s.scalars(select(RunItem)).one()
    assert (item.status, item.error, item.stage) == ("failed", "boom", "s1")


def test_upsert_needs_the_key_it_updates_on(store: Store) -> None:
    with store.session() as s, pytest.raises(ValueError, match="names the columns"):
        upsert(s, RunItem, {"run_id": 1, "item": "i"}, keys=(), update=("status",))


def test_result_cache_writes_through_the_stores_one_writer(store: Store) -> None:
    """Puts from many threads: every row committed by the writer thread, the first per key."""
    cache = ResultCache(store)
    seen: set[str] = set()
    real = store.writer.submit

    def spy(fn):
        def traced(s):
            seen.add(threading.current_thread().name)
            return fn(s)

        return real(traced)

    store.writer.submit = spy  # type: ignore[method-assign]
    keys = [f"k{i % 5}" for i in range(40)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda ik: cache.put(ik[1], _result(f"r{ik[0]}"), IDENT), enumerate(keys)))
    assert seen == {"math2-store-writer"}
    with store.session() as s:
        rows = dict(s.execute(select(LeanResult.key, LeanResult.result)).all())
    assert sorted(rows) == [f"k{i}" for i in range(5)]
    # first writer wins: a later put never replaces the stored result (a fresh cache reads it)
    stored = rows["k0"]["reason"]
    cache.put("k0", _result("later"), IDENT)
    assert ResultCache(store).get("k0").reason == stored
    assert store.writer.writes >= 41


async def test_async_store_and_result_cache_share_one_writer(store: Store) -> None:
    astore = AsyncStore(store)
    cache = ResultCache(store, writer=astore)
    before = astore.writes

    def add(s) -> int:
        return insert_ignore(s, Run, {"job": "j", "key": "w", "spec_hash": ""}, returning="id")

    run_id, _ = await asyncio.gather(
        astore.write(add), asyncio.to_thread(cache.put, "k", _result("ok"), IDENT)
    )
    assert isinstance(run_id, int)
    assert astore.writes - before == 2 and store.writer is astore.store.writer
    await astore.aclose()
    with pytest.raises(RuntimeError):
        await astore.write(add)


def test_a_closed_writer_refuses_and_the_store_makes_a_new_one(sqlite_store: Store) -> None:
    writer = sqlite_store.writer
    writer.write(lambda s: s.add(Run(job="j", key="c")))
    sqlite_store.close()
    with pytest.raises(WriterClosed):
        writer.submit(lambda s: None)
    assert sqlite_store.writer is not writer
    sqlite_store.writer.write(lambda s: s.add(Run(job="j", key="d")))
    with sqlite_store.session() as s:
        assert sorted(s.scalars(select(Run.key))) == ["c", "d"]


def test_the_writer_thread_cannot_wait_on_itself(sqlite_store: Store) -> None:
    writer = sqlite_store.writer
    with pytest.raises(RuntimeError, match="inside the writer"):
        writer.write(lambda s: writer.write(lambda s2: None))


def test_writes_submitted_together_share_one_commit(sqlite_store: Store) -> None:
    """`submit_many` (the Ray writer's `write_many`: every write a worker queued meanwhile) is
    one arrival: its writes go in one commit; one that fails is retried alone and fails alone."""
    writer = sqlite_store.writer
    writer.flush()
    commits, writes = writer.commits, writer.writes
    futs = writer.submit_many([lambda s, k=k: s.add(Run(job="j", key=f"k{k}")) for k in range(20)])
    for f in futs:
        f.result()
    assert (writer.commits - commits, writer.writes - writes) == (1, 20)

    def boom(s):
        raise ValueError("bad write")

    commits = writer.commits
    futs = writer.submit_many([lambda s: s.add(Run(job="j", key="x")), boom])
    futs[0].result()
    with pytest.raises(ValueError, match="bad write"):
        futs[1].result()
    assert writer.commits - commits == 1  # the good one, alone, after the batch failed
    with sqlite_store.session() as s:
        assert len(s.scalars(select(Run.key)).all()) == 21
