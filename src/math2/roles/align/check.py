"""The `checked` stage of a binding (K6.4): its Lean side through the Lean checker at the pinned
build, as job `bindings.check` on math2.runs (resumable: `math2 runs resume ID`).

- A model-written statement (a formalize binding): the agent text's code as a `statement` item
  at trust GENERATED (math2.lean.trust): hygiene, compile, `sorryAx` and the standard axioms only.
- A library declaration (an align or crosswalk binding): a probe `theorem math2_binding_probe :
  type_of% @NAME := @NAME` as a `proof` item (for a definition, `Nonempty (type_of% @NAME)`):
  the declaration must exist at the build, and the probe's axioms are the declaration's — the
  standard three only. The data cannot relax this: the name passes the same hygiene.

Either way the build reports the type (`#check @NAME`): its type hash (the import's hash
function) is recorded, and a library declaration whose hash differs from the imported one fails
(the pin moved under it). The verdict names the Lean identity (kind, version, Mathlib commit,
backend), the run and the attempt. A failed, timed-out or unreadable check is `check_failed`,
never `checked`; a later run checks it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.config import Settings
from math2.importers.lean_scout import type_hash_of
from math2.lean import CheckItem, ContextTrust, Mode
from math2.runs import (
    CannotResume,
    ItemContext,
    Job,
    Progress,
    Resume,
    RunSummary,
    register_job,
)
from math2.runs import step as run_step
from math2.services import RoleServices, ServiceSpec, execute_role, resolve_spec
from math2.store import AgentText, Run, Store
from math2.store.models import Binding, BindingStatus, Mention
from math2.util.limits import Resource

JOB = "bindings.check"
PROBE = "math2_binding_probe"
_DEFINITION_KINDS = ("def", "abbrev", "structure", "class", "inductive", "instance", "opaque")


class CheckOptions(BaseModel):
    """What a check run is asked to do."""

    lean_backend: str | None = None
    limit: int | None = None


class BindingItem(BaseModel):
    """One binding to check: the item for Lean, or why there is none."""

    id: str  # "binding:<id>"
    binding_id: int
    declaration: str = ""  # the Lean name whose type and axioms the build reports
    item: CheckItem | None = None
    error: str | None = None  # the binding cannot be checked (its Lean side is gone)
    imported_type_hash: str | None = None


class BindingChecked(BaseModel):
    """A checked binding: its new status and the verdict."""

    id: str
    binding_id: int
    status: BindingStatus
    verdict: dict[str, Any]


def probe_code(header: str, name: str, kind: str | None) -> str:
    """The proof item that asks the build for a library declaration (see the module docstring)."""
    if kind in _DEFINITION_KINDS:
        body = f"theorem {PROBE} : Nonempty (type_of% @{name}) := ⟨@{name}⟩"
    else:
        body = f"theorem {PROBE} : type_of% @{name} := @{name}"
    return f"{header.rstrip()}\n\n{body}\n"


def binding_item(s: Session, b: Binding, header: str) -> BindingItem:
    """What the check stage asks Lean about one binding."""
    bid = f"binding:{b.id}"
    if b.agent_text_id is not None:
        text = s.get(AgentText, b.agent_text_id)
        theorem = ((text.extra or {}).get("theorem") if text is not None else None) or ""
        if text is None or not theorem:
            return BindingItem(
                id=bid, binding_id=b.id, error="its statement (agent text) is gone or unnamed"
            )
        item = CheckItem(
            id=bid,
            code=text.body,
            name=None,
            mode=Mode.STATEMENT,
            trust=ContextTrust.GENERATED,
            show_types=[theorem],
        )
        return BindingItem(id=bid, binding_id=b.id, declaration=theorem, item=item)
    m = s.get(Mention, b.mention_id) if b.mention_id is not None else None
    if m is None:
        return BindingItem(id=bid, binding_id=b.id, error="its declaration is gone")
    item = CheckItem(
        id=bid,
        code=probe_code(header, m.name, m.kind),
        name=PROBE,
        mode=Mode.PROOF,
        trust=ContextTrust.GENERATED,
        show_types=[m.name],
    )
    return BindingItem(
        id=bid,
        binding_id=b.id,
        declaration=m.name,
        item=item,
        imported_type_hash=m.type_hash,
    )


def select_bindings(s: Session, limit: int | None) -> list[int]:
    """Bindings waiting for a check: proposed, or whose last check failed."""
    q = (
        select(Binding.id)
        .where(Binding.status.in_([BindingStatus.PROPOSED.value, BindingStatus.CHECK_FAILED.value]))
        .order_by(Binding.id)
    )
    if limit is not None:
        q = q.limit(limit)
    return list(s.scalars(q))


@run_step("binding.check")
def check_binding():
    """Ask Lean (an attempt row, answered from the Lean cache on a replay)."""

    async def run(rec: BindingItem, ctx: ItemContext[RoleServices]) -> BindingChecked:
        if rec.item is None:
            verdict = {"passed": False, "status": "unreadable", "reason": rec.error}
            return BindingChecked(
                id=rec.id,
                binding_id=rec.binding_id,
                status=BindingStatus.CHECK_FAILED,
                verdict=verdict,
            )
        checker = ctx.services.lean_checker
        result, aid = await ctx.lean(checker, rec.item, stage="binding.check")
        ident = checker.identity
        shown = result.types.get(rec.declaration)
        verdict: dict[str, Any] = {
            "passed": result.passed,
            "status": result.status.value,
            "reason": result.reason,
            "declaration": rec.declaration,
            "mode": rec.item.mode.value,
            "trust": rec.item.trust.value,
            "lean": ident.model_dump(mode="json") if ident is not None else None,
            "compiled_by": result.compiled_by or (ident.label() if ident else ""),
            "backend": result.backend,
            "axioms": result.axioms,
            "type": shown,
            "type_hash": type_hash_of(shown) if shown else None,
            "imported_type_hash": rec.imported_type_hash,
            "cached": result.cached,
            "run": ctx.run_id,
            "attempt": aid,
        }
        if result.passed and shown is None:
            why = f"the build reported no type for {rec.declaration}"
            verdict |= {"passed": False, "reason": why}
        elif (
            result.passed
            and rec.imported_type_hash
            and verdict["type_hash"] != rec.imported_type_hash
        ):
            verdict |= {
                "passed": False,
                "reason": (
                    f"the type of {rec.declaration} at the build (hash {verdict['type_hash']}) "
                    f"differs from the imported one ({rec.imported_type_hash}): the pin moved"
                ),
            }
        status = BindingStatus.CHECKED if verdict["passed"] else BindingStatus.CHECK_FAILED
        return BindingChecked(id=rec.id, binding_id=rec.binding_id, status=status, verdict=verdict)

    return run


def record_check(s: Session, checked: BindingChecked) -> None:
    """Write the verdict on the binding (idempotent; a person's decision is never undone)."""
    b = s.get(Binding, checked.binding_id)
    if b is None or b.status in (BindingStatus.CONFIRMED.value, BindingStatus.REJECTED.value):
        return
    b.status = checked.status.value
    b.lean_check = checked.verdict


@run_step("binding.record")
def record_binding_check():
    """Store each verdict on its binding."""

    async def run(rec: BindingChecked, ctx: ItemContext[RoleServices]) -> BindingChecked:
        await ctx.astore.write(lambda s: record_check(s, rec))
        return rec

    return run


def build_job(key: str) -> Job:
    """The check job over one set of bindings."""
    return Job(JOB, key, [check_binding(), record_binding_check()])


async def run_check(
    settings: Settings,
    store: Store,
    options: CheckOptions,
    *,
    ids: list[int] | None = None,
    key: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Check the bindings `ids` (default: every one waiting for a check), or resume the run
    `key` names (`math2 runs resume`). A fresh run's key is the bindings with their last check,
    so a binding whose check failed is checked again by a later run, not skipped as finished.

    Raises LeanNotConfigured (saying what to set up) before anything runs when no Lean is there.
    """
    spec = resolve_spec(settings, store, ServiceSpec(lean=True, lean_backend=options.lean_backend))
    with store.session() as s:
        if ids is None:
            ids = select_bindings(s, options.limit)
        rows = [b for i in ids if (b := s.get(Binding, i)) is not None]
        items = [binding_item(s, b, settings.lean.header) for b in rows]
        state = [f"{b.id}:{(b.lean_check or {}).get('attempt', '')}" for b in rows]
    key = key or hashlib.sha256(",".join(state).encode()).hexdigest()
    return await execute_role(
        settings,
        store,
        spec,
        build_job(key),
        items,
        resources=lambda _limiter: {"lean": Resource("lean", max(1, settings.lean.workers))},
        params={"binding_ids": ids, "options": options.model_dump(mode="json")},
        total=len(items),
        on_progress=on_progress,
        on_result=on_result,
        resume=resume,
    )


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    resume.local_only(JOB)
    params = run.params or {}
    ids = params.get("binding_ids")
    if ids is None:
        raise CannotResume(f"run {run.id}: it recorded no binding ids")
    options = CheckOptions.model_validate(params.get("options", {}))
    return await run_check(
        settings,
        store,
        options,
        ids=list(ids),
        key=run.key,
        on_progress=resume.on_progress,
        resume=resume,
    )


register_job(JOB, _resume)
