"""The role services: what the steps of a role's run call, built by one factory.

A run's steps call models (a generator, one or more judges, the battery's translator and NLI
model), a Lean checker, a retriever and the store writer. A job says what it needs in a
`ServiceSpec` (plain values: it travels to Ray workers; `spec.py`), `resolve_spec` checks it on
the driver once — every model in the register (X08) with its revision, the Mathlib pin the
manifest expects — and `build_services` (`build.py`) turns it into a typed `RoleServices` where
the steps run: in this process (`math2.runs.execute`) or in a Ray worker (`worker_services`, the
`services_factory` of `execute(executor="ray")`, on the worker's Lean pools and the run's writer).
The steps read `ctx.services.generator`, `.judge`, `.client(model)`, `.checker`, `.retriever`,
`.header` (`ctx: ItemContext[RoleServices]`). `execute_role` (`execute.py`) runs a role's job on
either executor; `lean.py` makes the Lean backend, pool and checker the settings describe.

The checker's Lean identity (version, Mathlib commit, backend) is asked of the backend once per
checker; every verdict and cache key names it (`math2.lean.identity`), and so does the run's
spec (`RoleServices.provenance`): another Lean or another model is another run.
"""

from math2.services.build import RoleServices, build_services, worker_services
from math2.services.execute import ResourcesFor, execute_role
from math2.services.lean import make_backend, make_checker, pool_config
from math2.services.spec import (
    MathlibPin,
    PinUnknown,
    Retriever,
    RetrieverFactory,
    ServiceSpec,
    find_pin,
    resolve_pin,
    resolve_spec,
)

__all__ = [
    "MathlibPin",
    "PinUnknown",
    "ResourcesFor",
    "Retriever",
    "RetrieverFactory",
    "RoleServices",
    "ServiceSpec",
    "build_services",
    "execute_role",
    "find_pin",
    "make_backend",
    "make_checker",
    "pool_config",
    "resolve_pin",
    "resolve_spec",
    "worker_services",
]
