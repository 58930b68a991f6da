"""`run_informalize`: Herald's informalization of a library, in dependency order, on math2.runs.

Each declaration's prompt carries its statement, its docstring, the declarations just before it
in its module and the informal statements already written for the declarations it uses. Items
run concurrently, but a declaration waits (on the `DescriptionBoard`) until the declarations it
uses are written, so it always sees their text; a resumed run fills the board from the finished
items first. Every output goes through the battery (the lints and back-translation + NLI by a
second model) and is stored as agent text (`informal_statement`, status `pending`: never node
text until a person confirms), with the model, the template's id and hash, the run and the
attempt; accepted only when every check that applies passed. A Mathlib docstring is kept as the
start of the summary, with its attribution. Herald's informal augmentations are options.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from math2.checks import Battery, CheckEnv, Pair, default_config, overall, record_outcomes
from math2.config import Settings
from math2.llm import load_template
from math2.roles.informalize.board import DescriptionBoard, board_for
from math2.roles.informalize.records import Decl, InformalizeResult
from math2.runs import (
    ItemContext,
    Job,
    Progress,
    Resume,
    RunSummary,
    record_agent_text,
    register_job,
    step,
)
from math2.services import RoleServices, ServiceSpec, execute_role, resolve_spec
from math2.store import Run, Store
from math2.store.work import AgentText, AgentTextKind, Verdict

if TYPE_CHECKING:
    from math2.runs.ray_exec import RayOptions

__all__ = [
    "AUGMENTATIONS",
    "DescriptionBoard",
    "InformalizeOptions",
    "build_job",
    "informalize_loop",
    "run_informalize",
]

JOB = "informalize"

AUGMENTATIONS = {
    "equivalence": "Rewrite it as a logically equivalent statement in different words "
    "(for example a contrapositive or a reformulation), keeping every condition.",
    "abstraction": "Replace concrete descriptions by the standard name of the abstract concept "
    "they define (for example 'the sum of 1/n diverges' becomes 'the harmonic series "
    "diverges'), keeping every condition.",
    "omission": "Leave out the conditions a mathematician would take as implicit from the "
    "context (such as standing type assumptions), keeping the essential ones.",
    "translation": "Translate it into {language}, keeping the mathematics and the LaTeX.",
}

MATHLIB_ATTRIBUTION = "Docstring from Mathlib ({module}), Apache-2.0, © the Mathlib contributors"


class InformalizeOptions(BaseModel):
    """What an informalize run is asked to do."""

    model: str
    translator: str
    nli: str | None = None
    library: str = "mathlib"
    lean_dir: str | None = None  # a Lean source tree instead of the store's mentions
    tactics_dir: str | None = None  # lean_scout tactics data: Herald's tactic augmentation
    limit: int | None = None
    names: list[str] | None = None  # only these declarations of the store's library (`--names`)
    augment: list[str] = Field(default_factory=list)
    language: str = "French"
    temperature: float = 0.2
    max_tokens: int = 1024
    check_max_tokens: int | None = None  # longest reply of the back-translation and NLI calls


def _battery(translator: str, nli: str | None, max_tokens: int | None) -> Battery:
    return Battery.from_config(
        default_config(translator=translator, nli=nli, max_tokens=max_tokens)
    )


def _summary(decl: Decl) -> dict[str, str] | None:
    if not decl.docstring or not decl.docstring.strip():
        return None
    return {
        "text": decl.docstring.strip(),
        "attribution": MATHLIB_ATTRIBUTION.format(module=decl.module or decl.library)
        if decl.library == "mathlib"
        else f"Docstring from {decl.library} ({decl.module})",
    }


def _record(
    s: Session,
    run_id: int,
    decl: Decl,
    result: InformalizeResult,
    model_id: int,
    pair: Pair,
    outcomes: list,
    augment_rows: list[tuple[str, str, int]],
) -> int:
    text_id, new = record_agent_text(
        s,
        kind=AgentTextKind.INFORMAL_STATEMENT,
        run_id=run_id,
        item=decl.id,
        body=result.informal or "",
        source_text=decl.lean,
        template=load_template("informalize/statement"),
        model_id=model_id,
        attempt_id=result.attempt_id,
        mention_id=decl.mention_id,
        extra={
            "accepted": result.accepted,
            "verdict": result.verdict,
            "failed_checks": result.failed_checks,
            "library": decl.library,
            "stratum": decl.origin,
            "module": decl.module,
            "deps": decl.deps,
            "summary": _summary(decl),
        },
    )
    if not new:
        return text_id
    record_outcomes(s, pair, outcomes, run_id=run_id, agent_text_id=text_id)
    a = load_template("informalize/augment")
    for kind, text, aid in augment_rows:
        s.add(
            AgentText(
                kind=AgentTextKind.AUGMENTATION,
                body=text,
                source_text=result.informal,
                mention_id=decl.mention_id,
                item=decl.id,
                run_id=run_id,
                attempt_id=aid,
                model_id=model_id,
                template_id=a.ref,
                template_hash=a.hash,
                extra={"augmentation": kind, "of": text_id, "library": decl.library},
            )
        )
    s.flush()
    return text_id


@step("informalize.loop")
def informalize_loop(
    model: str,
    translator: str,
    nli: str | None = None,
    augment: list[str] | None = None,
    language: str = "French",
    temperature: float = 0.2,
    max_tokens: int = 1024,
    check_max_tokens: int | None = None,
):
    """Write, check, store one declaration's informal statement (the arguments are the spec)."""
    battery = _battery(translator, nli, check_max_tokens)
    kinds = list(augment or [])

    async def run(decl: Decl, ctx: ItemContext[RoleServices]) -> InformalizeResult:
        services = ctx.services
        board = board_for(ctx)
        result = InformalizeResult(id=decl.id)
        try:
            deps = []
            for name in decl.waits_for:  # the other deps are no items of the run: no text
                text = await board.get(name, ctx)
                if text:
                    deps.append({"name": name, "text": text})
            reply, aid = await ctx.chat(
                services.client(model),
                load_template("informalize/statement"),
                {
                    "name": decl.name,
                    "kind": decl.kind,
                    "module": decl.module or "-",
                    "lean": decl.lean,
                    "docstring": decl.docstring,
                    "deps": deps,
                    "context": decl.context,
                },
                stage="write",
                temperature=temperature,
                max_tokens=max_tokens,
            )
            result.attempt_id = aid
            text = reply.content.strip()
            if not text:
                result.verdict = Verdict.ERROR.value
                result.failed_checks = ["empty reply"]
                return result
            result.informal = text
            pair = Pair(id=decl.id, informal=text, formal=decl.lean)
            outcomes = await battery.run(pair, CheckEnv(ctx=ctx))
            verdict = overall(outcomes)
            result.verdict = verdict.value
            result.accepted = verdict is Verdict.PASS
            result.failed_checks = [
                f"{o.check}:{o.verdict.value}"
                for o in outcomes
                if o.verdict in (Verdict.FAIL, Verdict.ERROR)
            ]
            augment_rows: list[tuple[str, str, int]] = []
            if result.accepted:
                for kind in kinds:
                    r, a_id = await ctx.chat(
                        services.client(model),
                        load_template("informalize/augment"),
                        {
                            "instruction": AUGMENTATIONS[kind].format(language=language),
                            "lean": decl.lean,
                            "informal": text,
                        },
                        stage=f"augment:{kind}",
                        temperature=temperature,
                        max_tokens=max_tokens,
                    )
                    if r.content.strip():
                        augment_rows.append((kind, r.content.strip(), a_id))
                        result.augmentations[kind] = r.content.strip()
            # plain values: the write travels to the run's writer on Ray
            model_id, run_id, done = services.model_id(model), ctx.run_id, result.model_copy()
            result.agent_text_id = await ctx.astore.write(
                lambda s: _record(s, run_id, decl, done, model_id, pair, outcomes, augment_rows)
            )
            return result
        finally:
            board.resolve(decl.id, result.informal if result.accepted else None)

    return run


def build_job(options: InformalizeOptions, input_key: str) -> Job:
    bad = [k for k in options.augment if k not in AUGMENTATIONS]
    if bad:
        raise ValueError(
            f"unknown augmentation {', '.join(bad)}; choose from {', '.join(AUGMENTATIONS)}"
        )
    loop = informalize_loop(
        model=options.model,
        translator=options.translator,
        nli=options.nli,
        augment=options.augment,
        language=options.language,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        check_max_tokens=options.check_max_tokens,
    )
    return Job(JOB, input_key, [loop])


def load_decls(store: Store, options: InformalizeOptions) -> list[Decl]:
    """The declarations of the run, in dependency order."""
    from math2.errors import InputError
    from math2.roles.informalize.sources import (
        decls_from_lean_dir,
        decls_from_store,
        decls_from_tactics,
        dependency_order,
    )

    if options.tactics_dir:
        from math2.importers.lean_scout import read_tactics

        decls = decls_from_tactics(
            read_tactics(Path(options.tactics_dir)), options.library, options.limit
        )
    elif options.lean_dir:
        decls = decls_from_lean_dir(Path(options.lean_dir), options.library)
    elif options.names is not None:  # only the named declarations, each with its module read
        from math2.roles.informalize.select import informalizable_names, named_from_store

        with store.session() as s:
            unknown = sorted(
                set(options.names) - informalizable_names(s, options.library, options.names)
            )
            if unknown:
                shown = ", ".join(unknown[:5]) + (
                    f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
                )
                raise InputError(
                    f"the store's {options.library!r}",
                    None,
                    f"{len(unknown)} names are no informalizable declaration of it: {shown}",
                )
            decls = named_from_store(s, options.library, options.names)
    elif options.limit:  # only the dependency closure of the selection is read and ordered
        from math2.roles.informalize.select import closure_from_store

        with store.session() as s:
            decls = closure_from_store(s, options.library, options.limit)
    else:
        with store.session() as s:
            decls = decls_from_store(s, options.library)
    decls = dependency_order(decls)
    if options.limit:
        decls = decls[: options.limit]
    if not decls:
        where = options.tactics_dir or options.lean_dir or f"the store's {options.library!r}"
        raise InputError(where, None, "no declarations to informalize (import the library first)")
    return decls


def _input_key(decls: list[Decl]) -> str:
    h = hashlib.sha256()
    for d in decls:
        h.update(json.dumps([d.id, d.statement, d.deps], ensure_ascii=False).encode())
    return h.hexdigest()


async def run_informalize(
    settings: Settings,
    store: Store,
    options: InformalizeOptions,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    ray: RayOptions | None = None,
    resume: Resume | None = None,
) -> RunSummary:
    """Informalize the declarations the options name (or resume that run); on a Ray cluster
    when `ray` (a `RayOptions`) is given."""
    decls = load_decls(store, options)
    ids = {d.id for d in decls}
    decls = [d.model_copy(update={"waits_for": [n for n in d.deps if n in ids]}) for d in decls]
    models = {options.translator, options.nli or options.translator} - {options.model}
    spec = resolve_spec(
        settings,
        store,
        ServiceSpec(generator=options.model, models=tuple(sorted(models))),
    )
    job = build_job(options, _input_key(decls))
    params = {"options": options.model_dump(mode="json")}
    if ray is not None:
        # A batch waits for the declarations it uses, written by earlier batches: every batch in
        # flight must be running (none queued behind a waiting one for a CPU), so a batch takes
        # no CPU slot; `items_per_node` still bounds how many are in flight.
        ray = ray.model_copy(update={"task_cpus": 0})
    return await execute_role(
        settings,
        store,
        spec,
        job,
        decls,
        resources=lambda limiter: {f"model:{m}": limiter(m) for m in spec.all_models},
        ray=ray,
        params=params,
        total=len(decls),
        on_progress=on_progress,
        on_result=on_result,
        resume=resume,
    )


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    options = InformalizeOptions.model_validate((run.params or {}).get("options", {}))
    return await run_informalize(
        settings, store, options, on_progress=resume.on_progress, ray=resume.ray, resume=resume
    )


register_job(JOB, _resume)
