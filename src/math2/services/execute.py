"""`execute_role`: a role's job run with the services of its resolved spec, on either executor."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from math2.services.build import build_services, worker_services
from math2.services.spec import ServiceSpec

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.runs import Job, Progress, Resume, RunSummary
    from math2.runs.ray_exec import RayOptions
    from math2.store import Store
    from math2.util.limits import Resource

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
    ray: RayOptions | None = None,
    params: dict[str, Any] | None = None,
    total: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Run a role's job with the services of a resolved spec: here (the services built once,
    closed at the end), or on a Ray cluster when `ray` (a `RayOptions`) is given (the same
    factory in each worker; each item worker owns Lean pools like the local one). The rest are
    `math2.runs.execute`'s; `resume` reopens the run it names (`math2 runs resume`)."""
    from math2.runs import execute
    from math2.store.aio import AsyncStore
    from math2.util.limits import Resource

    if ray is not None:
        from math2.llm import endpoint_for
        from math2.services.lean import pool_config

        if spec.lean and ray.lean is None:
            ray = ray.model_copy(update={"lean": pool_config(settings)})

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
            params=params,
            total=total,
            on_progress=on_progress,
            on_result=on_result,
            resume=resume,
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
            params=params,
            total=total,
            on_progress=on_progress,
            on_result=on_result,
            resume=resume,
        )
    finally:
        await services.aclose()
        await astore.aclose()
