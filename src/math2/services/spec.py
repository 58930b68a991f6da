"""What a run's steps need, stated as plain values (`ServiceSpec`), and the one check of it on
the driver (`resolve_spec`: every model registered, the Mathlib pin)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from math2.errors import Math2Error

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.store import Store


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
    `retriever` how to build the retriever. What an item needs of its own travels in the item's
    record, not here. `resolve_spec` fills `model_ids`, `revisions` and `pin`.
    """

    generator: str | None = None
    judges: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    lean: bool = False
    lean_backend: str | None = None
    allow_compiled: bool = False
    retriever: RetrieverFactory | None = None
    model_ids: dict[str, int] = field(default_factory=dict)
    revisions: dict[str, str] = field(default_factory=dict)  # each model's registered revision
    pin: MathlibPin | None = None

    @property
    def all_models(self) -> list[str]:
        """Every model the steps call: the generator, the judges, the others (each once)."""
        named = [self.generator] if self.generator else []
        return list(dict.fromkeys([*named, *self.judges, *self.models]))


def resolve_spec(settings: Settings, store: Store, spec: ServiceSpec) -> ServiceSpec:
    """The spec with each model's register id and revision and the Mathlib pin, checked once on
    the driver.

    Raises `UnregisteredModel` (naming the model and how to register it) before anything runs.
    """
    from math2.llm import require_model

    with store.session() as s:
        entries = {m: require_model(s, m) for m in spec.all_models}
        ids = {m: e.id for m, e in entries.items()}
        revisions = {m: e.revision or "" for m, e in entries.items()}
    return dataclasses.replace(
        spec,
        model_ids=ids,
        revisions=revisions,
        pin=find_pin(settings) if spec.lean else None,
    )
