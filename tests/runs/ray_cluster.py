"""What the Ray tests share: the Ray cluster a test module starts itself (`cluster`), fresh
PostgreSQL stores (`pg`), the check that no actor of a run outlives it (`lean_actors`), a run on
Ray of `ray_job`'s job (`_ray_run`), and what a run left: its items and attempts without ids or
times (`_rows`), the fake REPL's checks per item (`_checks`), the items done (`_count_done`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url

from math2.runs import Resource, execute
from math2.runs.ray_actors import NAMESPACE
from math2.runs.ray_exec import RayOptions
from math2.store import Attempt, RunItem, Store
from tests.runs import ray_job

ROOT = Path(__file__).resolve().parents[2]
N = 12


def _ray():
    try:
        import ray
    except ImportError:
        if os.environ.get("MATH2_REQUIRE_RAY"):
            pytest.fail(
                "MATH2_REQUIRE_RAY is set but ray is not installed (pip install math2[ray])"
            )
        pytest.skip("ray is not installed")
    return ray


@pytest.fixture(scope="module")
def cluster():
    ray = _ray()
    env = {"PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    _forget_auth_token()  # another module's cluster may have left its token cached
    ray.init(
        num_cpus=2,
        namespace=NAMESPACE,
        include_dashboard=False,
        runtime_env={"env_vars": env},
        logging_level="WARNING",
    )
    # Ray keeps the cluster's auth token under the HOME it started with (each test has its own
    # HOME): a driver started in another test's process must be pointed at it.
    _TOKEN.append(Path(os.environ["HOME"]) / ".ray" / "auth_token")
    yield ray
    ray.shutdown()
    _TOKEN.clear()


_TOKEN: list[Path] = []


def _forget_auth_token() -> None:
    """Ray caches one auth token per process: forget it, so the next cluster reads its own."""
    from ray._private.authentication_test_utils import reset_auth_token_state

    reset_auth_token_state()


def _driver_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    if _TOKEN and _TOKEN[-1].exists():
        env["RAY_AUTH_TOKEN_PATH"] = str(_TOKEN[-1])
    return env


@pytest.fixture
def pg():
    """A factory of fresh migrated PostgreSQL stores (dropped afterwards)."""
    admin = os.environ.get("MATH2_TEST_PG_URL")
    if not admin:
        if os.environ.get("MATH2_REQUIRE_PG") or os.environ.get("CI"):
            pytest.fail("MATH2_REQUIRE_PG is set but MATH2_TEST_PG_URL is not")
        pytest.skip("no PostgreSQL server (set MATH2_TEST_PG_URL)")
    admin_url = make_url(admin).set(drivername="postgresql+psycopg")
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    made: list[tuple[str, Store]] = []

    def make() -> Store:
        name = f"math2_ray_{uuid.uuid4().hex[:12]}"
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        store = Store(admin_url.set(database=name).render_as_string(hide_password=False))
        store.upgrade()
        made.append((name, store))
        return store

    yield make
    for name, store in made:
        store.close()
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def math2_actors(ray) -> list[str]:
    """math2's named actors alive on the cluster (a run's hub: its writer and limiters), in
    name order (Ray lists them in no fixed order)."""
    return sorted(n for n in ray.util.list_named_actors() if str(n).startswith("math2-"))


@pytest.fixture
def lean_actors(cluster):
    """The test's runs leave no actor behind: each run's actors end with it."""
    yield
    deadline = time.monotonic() + 30
    while math2_actors(cluster):
        assert time.monotonic() < deadline, f"actors outlived their run: {math2_actors(cluster)}"
        time.sleep(0.2)


_TIMES = {"latency_s", "time_s", "queue_s"}


def _strip(v):
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if k not in _TIMES}
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def _rows(store: Store) -> tuple[list, list]:
    """(run items, attempts) with ids and times removed, in a stable order, as JSON text."""
    with store.session() as s:
        items = [
            json.dumps([r.item, r.status, r.stage, r.error, r.attempt_count, r.result])
            for r in s.scalars(select(RunItem))
        ]
        attempts = [
            json.dumps(
                _strip(
                    [
                        a.item,
                        a.stage,
                        a.round,
                        a.sample,
                        a.model,
                        a.template_id,
                        a.template_hash,
                        a.request,
                        a.response,
                        a.verdict,
                        a.error,
                        a.cached,
                        a.tokens_in,
                        a.tokens_out,
                    ]
                ),
                sort_keys=True,
            )
            for a in s.scalars(select(Attempt))
        ]
    return sorted(items), sorted(attempts)


def _checks(repl_log: Path) -> Counter:
    """How many times the fake REPL was asked to check each item's theorem."""
    names = Counter()
    if repl_log.exists():
        for line in repl_log.read_text().splitlines():
            if m := re.search(r"theorem (t\d+)", json.loads(line).get("cmd", "")):
                names[m.group(1)] += 1
    return names


def _count_done(store: Store) -> int:
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(RunItem).where(RunItem.status == "done"))


def _resources():
    return {"model": Resource("model", 4), "lean": Resource("lean", 2)}


def _ray_run(
    store: Store,
    base_url: str,
    template: str,
    repl_log: Path,
    n: int = N,
    workers_per_node: int = 1,
    **kw,
):
    return execute(
        store,
        ray_job.job(template),
        ray_job.items(n),
        executor="ray",
        ray=RayOptions(
            batch_size=3,
            lean=ray_job.pool_config(repl_log, **kw),
            workers_per_node=workers_per_node,
        ),
        services_factory=functools.partial(ray_job.services, base_url),
        resources=_resources(),
    )


def _title(p) -> str:
    import psutil

    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""
