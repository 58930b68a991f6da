"""The one factory of a role's services: `build_services` turns a resolved `ServiceSpec` into the
typed `RoleServices` the steps call — here, or (`worker_services`) in a Ray worker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from math2.runs import Provenance, RunServices, RunStore
from math2.services.spec import MathlibPin, Retriever, ServiceSpec

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.lean import LeanBackend, LeanChecker, LeanIdentity
    from math2.lean.cache import ResultCache
    from math2.llm import LLMClient
    from math2.runs.ray_actors import WorkerEnv
    from math2.store import Store
    from math2.store.aio import AsyncStore


@dataclass
class RoleServices(RunServices):
    """The typed services of a role's steps (`ctx: ItemContext[RoleServices]`): one client per
    model, the checker, the retriever, the run's store writer."""

    settings: Settings
    spec: ServiceSpec
    clients: dict[str, LLMClient]
    writer: RunStore  # the run's store writer: AsyncStore here, the run's writer on Ray
    checker: LeanChecker | None = None
    retriever: Retriever | None = None
    owns_backend: bool = True  # False on Ray: the checker's backend is the item worker's pools

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

    @property
    def lean_checker(self) -> LeanChecker:
        """The checker of a run that checks with Lean; LookupError for one that does not."""
        if self.checker is None:
            raise LookupError("this run has no Lean checker (its spec asks for no Lean)")
        return self.checker

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

    async def lean_identity(self) -> LeanIdentity | None:
        """The Lean the checker's backend reports (asked once per checker)."""
        return await self.checker.ensure_identity() if self.checker is not None else None

    async def provenance(self) -> Provenance:
        """The Lean the checker reports and each model with its registered revision: part of the
        run's identity, so another Lean or another model is another run."""
        return Provenance(
            lean=await self.lean_identity(),
            models={m: self.spec.revisions.get(m, "") for m in self.spec.all_models},
        )

    def values(self) -> Iterator[LLMClient]:
        """One client per model."""
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
    writer: RunStore,
    lean_backend: LeanBackend | None = None,
    result_cache: ResultCache | None = None,
) -> RoleServices:
    """The services a spec asks for: one client per model (with the writer's response cache),
    a checker (on `lean_backend`, else the settings' backend; with `result_cache`, else the
    store's) and the retriever. The one place role services are made."""
    from math2.llm import make_client
    from math2.services.lean import make_checker

    checker = None  # first: a Lean that is not configured fails before any client is opened
    if spec.lean:
        checker = make_checker(
            settings,
            store,
            spec.lean_backend,
            allow_compiled=spec.allow_compiled,
            lean_backend=lean_backend,
            cache=result_cache,
        )
    # a Ray worker's writer (RemoteStore) serves the response cache's reads and writes alike
    cache_store = cast("AsyncStore", writer)
    clients = {m: make_client(settings, m, cache_store) for m in spec.all_models}
    return RoleServices(
        settings=settings,
        spec=spec,
        clients=clients,
        writer=writer,
        checker=checker,
        retriever=spec.retriever(settings, store) if spec.retriever is not None else None,
        owns_backend=lean_backend is None,
    )


def worker_services(settings: Settings, spec: ServiceSpec, env: WorkerEnv) -> RoleServices:
    """`build_services` where a Ray worker runs the steps (`env`: `math2.runs.ray_actors.
    WorkerEnv`): the worker's store, its Lean pools, the Lean result cache written
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
