"""What a run is: its job, its input and its spec — the steps with their arguments, and what the
results come from beside them, the Lean (kind, version, Mathlib commit, header) and the models
(each with its registered revision).

    identity = run_identity(job, Provenance(lean=checker_identity, models={"gen": "v2"}))
    identity.spec_hash  # the same job over the same input on the same Lean and models: one run

So the same command under another Lean, or with another model, is another run whose verdicts are
fresh; a resume of a run whose spec would now be another says what changed (`spec_changes`) and
is refused unless the user allows it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from math2.lean.identity import LeanIdentity
from math2.runs.spec import Job, spec_hash

__all__ = ["Provenance", "RunIdentity", "lean_of", "run_identity", "spec_changes", "spec_hash"]


class Provenance(BaseModel):
    """What a run's results come from beside its steps, as the services report it: the Lean
    the checker's backend says it is (None: the run checks nothing) and each model the steps call
    with its registered revision ("" when the register names none)."""

    lean: LeanIdentity | None = None
    models: dict[str, str] = Field(default_factory=dict)

    def spec_part(self) -> dict[str, Any]:
        """The part of a run's spec it makes (empty when the run has neither Lean nor models,
        so such a job's spec is its steps alone)."""
        part: dict[str, Any] = {}
        if self.lean is not None:
            part["lean"] = self.lean.model_dump(mode="json", exclude={"note"})
        if self.models:
            part["models"] = dict(sorted(self.models.items()))
        return part


class RunIdentity(BaseModel):
    """One run: job + input key + spec (its hash is the third part of the store's key)."""

    job: str
    key: str
    spec: dict[str, Any]

    @property
    def spec_hash(self) -> str:
        return spec_hash(self.spec)


def run_identity(job: Job, provenance: Provenance | None = None) -> RunIdentity:
    """The identity of `job` run on what `provenance` names."""
    extra = provenance.spec_part() if provenance is not None else {}
    return RunIdentity(job=job.name, key=job.input_key, spec={**job.spec, **extra})


def lean_of(spec: dict[str, Any]) -> LeanIdentity | None:
    """The Lean a spec names, or None (a run that checks nothing, or one recorded before runs
    named their Lean)."""
    lean = spec.get("lean")
    return LeanIdentity.model_validate(lean) if isinstance(lean, dict) else None


def _flat(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flat(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        for i, v in enumerate(value):
            _flat(v, f"{path}[{i}]", out)
    else:
        out[path] = value


def spec_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two specs, one line per value: `lean.lean_version: 'a' → 'b'`
    (a value only one side has shows as `absent` on the other)."""
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    _flat(old, "", a)
    _flat(new, "", b)
    lines = []
    for path in sorted(a.keys() | b.keys()):
        was, now = a.get(path, _ABSENT), b.get(path, _ABSENT)
        if was != now:
            lines.append(f"{path}: {_show(was)} → {_show(now)}")
    return lines


class _Absent:
    def __repr__(self) -> str:
        return "absent"


_ABSENT = _Absent()


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:79] + "…"
