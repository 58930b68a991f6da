"""Steps registered by name, their arguments hashed into the run's spec.

    @step("formalize.loop")
    def formalize_loop(model: str, judge: str, max_rounds: int = 3) -> StepFn:
        async def run(record: FormalizeInput, ctx: ItemContext) -> FormalizeResult: ...
        return run

    job = Job("formalize", input_key=digest, steps=[formalize_loop(model="m", judge="j")])

Calling a registered factory returns a `Step` that carries its name and its (JSON) arguments; a
run is identified by job + input key + the hash of those specs, so two models or two settings
over the same input are two runs side by side, and the same ones resume the same run.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from math2.llm.types import canonical

if TYPE_CHECKING:
    from math2.runs.context import ItemContext


class Record(Protocol):
    """What flows through steps: a pydantic model with an `id`."""

    id: str

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]: ...


StepFn = Callable[[Any, "ItemContext[Any]"], Awaitable[Any]]


class StepSpec(BaseModel):
    """A step's name and the arguments it was made with."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Step:
    """A step ready to run: its spec and its async function."""

    def __init__(self, spec: StepSpec, fn: StepFn):
        self.spec = spec
        self.fn = fn

    def __repr__(self) -> str:
        return f"Step({self.spec.name}, {self.spec.args})"


_STEPS: dict[str, Callable[..., Step]] = {}


def step(name: str) -> Callable[[Callable[..., StepFn]], Callable[..., Step]]:
    """Register a step factory under `name`; its call arguments become the step's spec."""

    def deco(factory: Callable[..., StepFn]) -> Callable[..., Step]:
        if name in _STEPS:
            raise ValueError(f"a step named {name!r} is already registered")
        sig = inspect.signature(factory)

        @functools.wraps(factory)
        def make(*args: Any, **kwargs: Any) -> Step:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            spec = StepSpec(name=name, args=dict(bound.arguments))
            canonical(spec.args)  # arguments must be plain data, so the spec can be hashed
            return Step(spec, factory(*bound.args, **bound.kwargs))

        _STEPS[name] = make
        return make

    return deco


def registered_steps() -> dict[str, Callable[..., Step]]:
    """Every registered step factory, by name."""
    return dict(_STEPS)


class Job:
    """A named list of steps over an input; its spec hash identifies the run."""

    def __init__(self, name: str, input_key: str, steps: list[Step], version: int = 1):
        if not steps:
            raise ValueError("a job needs at least one step")
        self.name = name
        self.input_key = input_key
        self.steps = steps
        self.version = version

    @property
    def spec(self) -> dict[str, Any]:
        """The run's spec: the job's version and each step's name and arguments."""
        return {"version": self.version, "steps": [s.spec.model_dump() for s in self.steps]}

    @property
    def spec_hash(self) -> str:
        """SHA-256 of the steps' spec (a run's spec adds its Lean and models to it:
        `math2.runs.identity.run_identity`)."""
        return spec_hash(self.spec)


def spec_hash(spec: dict[str, Any]) -> str:
    """SHA-256 of a canonical spec (every run's spec hash is this)."""
    return hashlib.sha256(canonical(spec).encode("utf-8")).hexdigest()
