"""A check: a registered step that judges one (informal, formal) pair, with a typed verdict.

    @register("lint.trivial_goal")
    class TrivialGoal(Check):
        async def run(self, pair, env) -> Outcome: ...

A check's verdict is a `math2.store.work.Verdict`: pass, fail, error (it could not decide: an
unreadable judge, a backend down, a formal statement that does not parse — never a pass) or
skip (it does not apply). Each outcome carries its evidence (a JSON-ready dict) and, for a
check that calls a model, the checker (model id) and the attempt that recorded the call.
A battery (`battery.py`) is a configured list of checks; several judges of one kind run side by
side as separate checks with different checker models.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from math2.store.work import Verdict

__all__ = [
    "Check",
    "CheckEnv",
    "Outcome",
    "Pair",
    "UnknownCheck",
    "check_names",
    "make_check",
    "pair_key",
    "register",
]


def pair_key(informal: str, formal: str) -> str:
    """The digest of a pair (the key of its check results)."""
    h = hashlib.sha256()
    h.update(informal.encode())
    h.update(b"\x00")
    h.update(formal.encode())
    return h.hexdigest()


#: The most characters each text field of a pair may hold. A statement longer than this is
#: not a statement (a 4 MB "informal text" is refused before any check sees it).
TEXT_LIMITS = {"id": 500, "informal": 20_000, "formal": 50_000, "header": 20_000}
META_LIMIT = 2_000  # each string in a pair's meta


class Pair(BaseModel):
    """One (informal, formal) pair to judge; `header` is the Lean import/open preamble."""

    id: str = Field(max_length=TEXT_LIMITS["id"])
    informal: str = Field(max_length=TEXT_LIMITS["informal"])
    formal: str = Field(max_length=TEXT_LIMITS["formal"])
    header: str = Field("", max_length=TEXT_LIMITS["header"])
    meta: dict[str, Any] = Field(default_factory=dict)  # role, library, source, …

    @property
    def key(self) -> str:
        return pair_key(self.informal, self.formal)


class Outcome(BaseModel):
    """The verdict of one check on one pair."""

    check: str
    verdict: Verdict
    checker: str = ""  # the model (or backend) that judged; "" for a deterministic check
    score: float | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    attempt_id: int | None = None

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS


@dataclass
class CheckEnv:
    """What checks may use: a run's item context (model calls, Lean) and its services.

    Deterministic checks need nothing; model checks need `ctx` (a `math2.runs.ItemContext`)
    whose `services` (a `math2.services.RoleServices`) hold the clients of the models named in
    their configuration and, for `compile`, the Lean checker.
    """

    ctx: Any = None

    @property
    def services(self) -> Any:
        """The run's `RoleServices` (None outside a run)."""
        return self.ctx.services if self.ctx is not None else None

    def client(self, model: str) -> Any:
        """The client of a model, or None when the run has none for it."""
        try:
            return self.services.client(model) if self.services is not None else None
        except LookupError:
            return None


class Check:
    """Base class: subclasses set `name` (by `register`) and implement `run`."""

    name: ClassVar[str] = ""
    #: whether the check calls a model or Lean (a battery without a context skips those)
    needs_context: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        self.options = options

    @property
    def checker(self) -> str:
        return ""

    @property
    def label(self) -> str:
        """The name stored in `check_results.check` (a judge may add its own suffix)."""
        return self.name

    def outcome(self, verdict: Verdict, **kw: Any) -> Outcome:
        return Outcome(check=self.label, verdict=verdict, checker=self.checker, **kw)

    async def run(self, pair: Pair, env: CheckEnv) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError


_REGISTRY: dict[str, type[Check]] = {}


class UnknownCheck(KeyError):
    """A battery names a check that is not registered."""

    def __str__(self) -> str:
        return f"unknown check {self.args[0]!r}; registered: {', '.join(sorted(_REGISTRY)) or '-'}"


def register(name: str) -> Callable[[type[Check]], type[Check]]:
    """Register a check class under a name (the name in a battery configuration)."""

    def deco(cls: type[Check]) -> type[Check]:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"check {name!r} registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def check_names() -> list[str]:
    return sorted(_REGISTRY)


def make_check(name: str, **options: Any) -> Check:
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise UnknownCheck(name) from None
    return cls(**options)
