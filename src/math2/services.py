"""The role services: what the steps of a role's run call, built by one factory.

A run's steps call models (a generator, one or more judges, the battery's translator and NLI
model), a Lean checker, a retriever and the store writer. A job says what it needs in a
`ServiceSpec` (plain values: it travels to Ray workers), `resolve_spec` checks it on the driver
once — every model in the register (X08), the Mathlib pin the manifest expects — and
`build_services` turns it into a typed `RoleServices` where the steps run: in this process
(`math2.runs.execute`) or in a Ray worker (`worker_services`, the `services_factory` of
`execute(executor="ray")`, on the node's Lean actor and the run's writer). The steps read
`ctx.services.generator`, `.judge`, `.client(model)`, `.checker`, `.retriever`, `.header`.

The checker's Lean identity (version, Mathlib commit, backend) is asked of the backend once per
checker, on its first check; every verdict and cache key names it (`math2.lean.identity`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from math2.errors import Math2Error

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.lean import LeanChecker, LeanIdentity
    from math2.llm import LLMClient
    from math2.runs import Job, RunSummary
    from math2.store import Store
    from math2.util.limits import Resource

__all__ = [
    "MathlibPin",
    "PinUnknown",
    "Retriever",
    "RoleServices",
    "ServiceSpec",
    "build_services",
    "execute_role",
    "resolve_pin",
    "resolve_spec",
    "worker_services",
]


class PinUnknown(Math2Error):
    """Neither the settings nor the manifest say which Lean toolchain and Mathlib to use."""


@dataclass(frozen=True)
class MathlibPin:
    """The Lean toolchain and Mathlib commit math2 is set up for (what `math2 lean setup`
    installs). Verdicts name the Lean the backend reports, not this."""

    toolchain: str
    mathlib_commit: str


def find_pin(settings: Settings) -> MathlibPin | None:
    """The pin from the settings (`lean.toolchain`, `lean.mathlib_commit`), each completed from
    the manifest's Mathlib pin; None when the two together do not give both."""
    lean = settings.lean
    toolchain, commit = lean.toolchain, lean.mathlib_commit
    if not (toolchain and commit):
        from math2.sources import load_manifest

        try:
            pin = load_manifest(settings.manifest).get("mathlib").current_pin
        except (Math2Error, KeyError):
            pin = None
        toolchain = toolchain or (pin.toolchain if pin is not None else None)
        commit = commit or (pin.commit if pin is not None else None)
    if not (toolchain and commit):
        return None
    return MathlibPin(toolchain=toolchain, mathlib_commit=commit)


def resolve_pin(settings: Settings) -> MathlibPin:
    """As `find_pin`; PinUnknown says where to set what is missing."""
    pin = find_pin(settings)
    if pin is None:
        raise PinUnknown(
            f"{settings.manifest}: the mathlib source has no pin with a toolchain and a commit; "
            "set lean.toolchain and lean.mathlib_commit in math2.toml "
            "(or MATH2_LEAN__TOOLCHAIN and MATH2_LEAN__MATHLIB_COMMIT)"
        )
    return pin


class Retriever(Protocol):
    """Search for the formalize loop: the top k declarations for a query."""

    async def search(self, query: str, k: int) -> list[Any]: ...


#: Builds a retriever where the steps run: (settings, store) -> retriever or None. A module-level
#: function or a functools.partial of one, so that it travels to Ray workers.
RetrieverFactory = Callable[["Settings", "Store"], "Retriever | None"]


@dataclass(frozen=True)
class ServiceSpec:
    """What a run's steps need; plain values (it travels to Ray workers).

    `generator` and `judges` are models with a role in the loop; `models` any other model the
    steps call by name (the battery's); `lean` whether a checker is needed (on `lean_backend`,
    the settings' by default; `allow_compiled` only ever from the caller, never from data);
    `retriever` how to build the retriever; `extra` the job's own plain values (the steps read
    them from `services.extra`). `resolve_spec` fills `model_ids` and `pin`.
    """

    generator: str | None = None
    judges: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    lean: bool = False
    lean_backend: str | None = None
    allow_compiled: bool = False
    retriever: RetrieverFactory | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    model_ids: dict[str, int] = field(default_factory=dict)
    pin: MathlibPin | None = None

    @property
    def all_models(self) -> list[str]:
        """Every model the steps call: the generator, the judges, the others (each once)."""
        named = [self.generator] if self.generator else []
        return list(dict.fromkeys([*named, *self.judges, *self.models]))


def resolve_spec(settings: Settings, store: Store, spec: ServiceSpec) -> ServiceSpec:
    """The spec with each model's register id and the Mathlib pin, checked once on the driver.

    Raises `UnregisteredModel` (naming the model and how to register it) before anything runs.
    """
    from math2.llm import require_model

    with store.session() as s:
        ids = {m: require_model(s, m).id for m in spec.all_models}
    return dataclasses.replace(spec, model_ids=ids, pin=find_pin(settings) if spec.lean else None)


@dataclass
class RoleServices:
    """The typed services of a run's steps (see the module docstring)."""

    settings: Settings
    spec: ServiceSpec
    clients: dict[str, LLMClient]
    writer: Any  # the run's store writer: AsyncStore here, the run's writer on Ray
    checker: LeanChecker | None = None
    retriever: Retriever | None = None
    owns_backend: bool = True  # False on Ray: the checker's backend is the node's Lean actor

    @property
    def generator(self) -> LLMClient:
        if self.spec.generator is None:
            raise LookupError("this run has no generator model")
        return self.clients[self.spec.generator]

    @property
    def judges(self) -> dict[str, LLMClient]:
        """The judges' clients, in the spec's order."""
        return {j: self.clients[j] for j in self.spec.judges}

    @property
    def judge(self) -> LLMClient:
        """The first judge (the one whose verdict the formalize loop refines on)."""
        if not self.spec.judges:
            raise LookupError("this run has no judge model")
        return self.clients[self.spec.judges[0]]

    def client(self, model: str) -> LLMClient:
        """The client of a model the run calls; LookupError for one it does not."""
        try:
            return self.clients[model]
        except KeyError:
            raise LookupError(f"no client for model {model!r} in this run") from None

    def model_id(self, model: str) -> int:
        """A model's id in the register (resolved by `resolve_spec`)."""
        return self.spec.model_ids[model]

    @property
    def header(self) -> str:
        """The trusted Lean import header."""
        return self.settings.lean.header

    @property
    def pin(self) -> MathlibPin | None:
        return self.spec.pin

    @property
    def extra(self) -> dict[str, Any]:
        return self.spec.extra

    async def lean_identity(self) -> LeanIdentity | None:
        """The Lean the checker's backend reports (asked once per checker)."""
        return await self.checker.ensure_identity() if self.checker is not None else None

    def values(self) -> Iterator[Any]:
        """The runtime objects the run engine reports on (usage, retries) and a Ray worker
        closes at the end of a batch: one client per model."""
        return iter(self.clients.values())

    async def aclose(self) -> None:
        """Close every client and, where this process owns it, the Lean backend."""
        for c in self.clients.values():
            await c.aclose()
        if self.checker is not None and self.owns_backend:
            await self.checker.backend.close()


def build_services(
    settings: Settings,
    spec: ServiceSpec,
    *,
    store: Store,
    writer: Any,
    lean_backend: Any = None,
    result_cache: Any = None,
) -> RoleServices:
    """The services a spec asks for: one client per model (with the writer's response cache),
    a checker (on `lean_backend`, else the settings' backend; with `result_cache`, else the
    store's) and the retriever. The one place role services are made."""
    from math2.lean import LeanChecker, make_backend
    from math2.llm import make_client

    checker = None  # first: a Lean that is not configured fails before any client is opened
    if spec.lean:
        if result_cache is None:
            from math2.lean.cache import ResultCache

            result_cache = ResultCache(store)
        checker = LeanChecker(
            lean_backend or make_backend(settings, spec.lean_backend),
            cache=result_cache,
            header=settings.lean.header,
            timeout_s=settings.lean.timeout_s,
            limits=settings.lean.limits,
            allow_compiled=spec.allow_compiled,
        )
    clients = {m: make_client(settings, m, writer) for m in spec.all_models}
    return RoleServices(
        settings=settings,
        spec=spec,
        clients=clients,
        writer=writer,
        checker=checker,
        retriever=spec.retriever(settings, store) if spec.retriever is not None else None,
        owns_backend=lean_backend is None,
    )


def worker_services(settings: Settings, spec: ServiceSpec, env: Any) -> RoleServices:
    """`build_services` where a Ray worker runs the steps (`env`: `math2.runs.ray_actors.
    WorkerEnv`): the worker's store, the node's Lean actor, the Lean result cache written
    through the run's writer. Give `functools.partial(worker_services, settings, spec)` to
    `execute(executor="ray", services_factory=…)`."""
    return build_services(
        settings,
        spec,
        store=env.store,
        writer=env.astore,
        lean_backend=env.lean_backend if spec.lean else None,
        result_cache=env.result_cache() if spec.lean else None,
    )


#: A job's resources, given each model's concurrency limit: limiter(model) -> Resource.
ResourcesFor = Callable[[Callable[[str], "Resource"]], dict[str, "Resource"]]


async def execute_role(
    settings: Settings,
    store: Store,
    spec: ServiceSpec,
    job: Job,
    records: Iterable[Any] | AsyncIterable[Any],
    *,
    resources: ResourcesFor,
    ray: Any = None,
    **kw: Any,
) -> RunSummary:
    """Run a role's job with the services of a resolved spec: here (the services built once,
    closed at the end), or on a Ray cluster when `ray` (a `RayOptions`) is given (the same
    factory in each worker; each node's Lean actors own a pool like the local one). `kw` are
    `math2.runs.execute`'s (params, total, on_progress, on_result)."""
    from math2.runs import execute
    from math2.store.aio import AsyncStore

    if ray is not None:
        import functools

        from math2.lean import pool_config
        from math2.llm import endpoint_for
        from math2.util.limits import Resource

        if spec.lean and ray.lean is None:
            ray = dataclasses.replace(ray, lean=pool_config(settings))

        def capacity(m: str) -> Resource:
            return Resource(f"model:{m}", endpoint_for(settings, m).concurrency)

        return await execute(
            store,
            job,
            records,
            executor="ray",
            ray=ray,
            services_factory=functools.partial(worker_services, settings, spec),
            resources=resources(capacity),
            **kw,
        )
    astore = AsyncStore(store)
    services = build_services(settings, spec, store=store, writer=astore)
    try:
        return await execute(
            astore,
            job,
            records,
            resources=resources(lambda m: services.client(m).limiter),
            services=services,
            **kw,
        )
    finally:
        await services.aclose()
        await astore.aclose()
