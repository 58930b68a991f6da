"""The role services: one factory, the spec checked once, the pin resolved with a clear error."""

from __future__ import annotations

import dataclasses
import functools
import pickle

import pytest

from math2.config import LeanSettings, LLMSettings, Settings
from math2.llm import add_model
from math2.llm.types import UnregisteredModel
from math2.services import (
    MathlibPin,
    PinUnknown,
    ServiceSpec,
    build_services,
    find_pin,
    resolve_pin,
    resolve_spec,
    worker_services,
)
from math2.store.aio import AsyncStore


def _settings(tmp_path, **lean) -> Settings:
    manifest = tmp_path / "sources.yaml"
    manifest.write_text("sources: []\n")
    return Settings(
        db_url=f"sqlite:///{tmp_path / 'math2.db'}",
        manifest=manifest,
        llm=LLMSettings(base_url="http://127.0.0.1:9/v1", concurrency=3),
        lean=LeanSettings(backend="kimina", **lean),
    )


def test_the_pin_comes_from_the_settings_or_a_clear_error(tmp_path):
    settings = _settings(tmp_path)
    assert find_pin(settings) is None
    with pytest.raises(PinUnknown) as exc:
        resolve_pin(settings)
    assert "sources.yaml" in str(exc.value) and "lean.mathlib_commit" in str(exc.value)
    pinned = _settings(tmp_path, toolchain="leanprover/lean4:v4.9.0", mathlib_commit="abc")
    assert resolve_pin(pinned) == MathlibPin("leanprover/lean4:v4.9.0", "abc")


def test_the_cli_says_what_to_set_when_no_pin_is_known(tmp_path):
    from typer.testing import CliRunner

    from math2.cli import app

    manifest = tmp_path / "sources.yaml"
    manifest.write_text("sources: []\n")
    env = {"MATH2_MANIFEST": str(manifest), "MATH2_CONFIG": str(tmp_path / "none.toml")}
    r = CliRunner().invoke(app, ["lean", "setup", "--dry-run"], env=env)
    assert r.exit_code != 0 and "Traceback" not in r.output, r.output
    assert "lean.mathlib_commit" in r.output, r.output


def test_every_model_is_checked_once_before_anything_runs(tmp_path, sqlite_store):
    settings = _settings(tmp_path)
    with sqlite_store.session() as s:
        add_model(s, "gen")
    spec = ServiceSpec(generator="gen", judges=("judge",))
    with pytest.raises(UnregisteredModel, match="judge"):
        resolve_spec(settings, sqlite_store, spec)
    with sqlite_store.session() as s:
        add_model(s, "judge")
    resolved = resolve_spec(settings, sqlite_store, spec)
    assert set(resolved.model_ids) == {"gen", "judge"} and resolved.pin is None


def _no_retriever(settings, store, library):
    return ("retriever", library)


async def test_one_factory_builds_typed_services(tmp_path, sqlite_store):
    settings = _settings(tmp_path, toolchain="t", mathlib_commit="c")
    with sqlite_store.session() as s:
        for m in ("gen", "j2", "trans"):
            add_model(s, m)
    spec = ServiceSpec(
        generator="gen",
        judges=("gen", "j2"),  # a judge that is the generator shares its client
        models=("trans",),
        lean=True,
        allow_compiled=True,
        retriever=functools.partial(_no_retriever, library="mathlib"),
    )
    spec = resolve_spec(settings, sqlite_store, spec)
    assert spec.pin == MathlibPin("t", "c")
    # the spec travels to Ray workers: plain values only
    back = pickle.loads(pickle.dumps(spec))
    assert dataclasses.replace(back, retriever=None) == dataclasses.replace(spec, retriever=None)
    assert back.retriever(settings, sqlite_store) == ("retriever", "mathlib")
    astore = AsyncStore(sqlite_store)
    services = build_services(settings, spec, store=sqlite_store, writer=astore)
    try:
        assert list(services.clients) == ["gen", "j2", "trans"]
        assert services.judge is services.generator is services.client("gen")
        assert list(services.judges) == ["gen", "j2"]
        assert services.checker.allow_compiled and services.checker.backend.name == "kimina"
        assert services.retriever == ("retriever", "mathlib")
        assert services.header == settings.lean.header and not hasattr(services, "extra")
        assert spec.revisions == {"gen": "", "j2": "", "trans": ""}
        assert services.model_clients() == list(services.clients.values())
        assert services.model_id("j2") == spec.model_ids["j2"]
        assert services.generator.limiter.capacity == 3
        with pytest.raises(LookupError, match="nobody"):
            services.client("nobody")
        assert list(services.values()) == list(services.clients.values())
    finally:
        await services.aclose()
        await astore.aclose()


async def test_a_worker_builds_on_its_node_and_writer(tmp_path, sqlite_store):
    """`worker_services` is the same factory on what a Ray worker has: the node's Lean backend
    (not closed by the services) and the run's result cache."""
    settings = _settings(tmp_path)
    with sqlite_store.session() as s:
        add_model(s, "gen")
    spec = resolve_spec(settings, sqlite_store, ServiceSpec(generator="gen", lean=True))
    closed = []

    class Backend:
        name = "node-actor"

        async def close(self):
            closed.append(True)

    class Env:
        store = sqlite_store
        astore = AsyncStore(sqlite_store)
        lean_backend = Backend()

        def result_cache(self):
            return "the run's cache"

    env = Env()
    services = worker_services(settings, spec, env)
    assert services.checker.backend is env.lean_backend
    assert services.checker.cache == "the run's cache" and services.writer is env.astore
    await services.aclose()
    assert closed == []  # the node's actor outlives a batch
    await env.astore.aclose()
