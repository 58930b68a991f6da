"""`run_formalize`: the formalize job over a JSONL file, on the run engine, with provenance.

Both models must be in the register (X08). Each accepted statement is written as agent text
(`agent_texts`, kind `formal_statement`, status `pending`): it names the generator model, the
generate template's id and hash, the run and the attempt that wrote it, and the informal
statement it came from. It becomes corpus text only through a person's review.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from math2.config import Settings
from math2.errors import Math2Error
from math2.llm import load_template
from math2.roles.formalize.inputs import input_digest, read_inputs
from math2.roles.formalize.loop import formalize_loop
from math2.roles.formalize.records import FormalizeResult, Hit, Outcome
from math2.runs import (
    CannotResume,
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
from math2.store import AgentTextKind, Run, Store
from math2.util.limits import Resource

if TYPE_CHECKING:
    from math2.runs.ray_exec import RayOptions

JOB = "formalize"


class FormalizeOptions(BaseModel):
    """What a formalize run is asked to do (the spec, plus what resume needs)."""

    model: str
    judge: str
    top_k: int = 2
    max_rounds: int = 3
    retrieval: bool = True
    refine: bool = True
    best_of_n: int = 1
    temperature: float = 0.7
    # the generator's budget, or per stage (plan, generate, judge); None: the templates'
    max_tokens: int | dict[str, int] | None = None
    field: str | None = None
    limit: int | None = None
    lean_backend: str | None = None
    index_library: str = "mathlib"


class IndexRetriever:
    """Search through `math2.retrieval.search` over one library's index; hits with their
    statements (resolved from the store)."""

    def __init__(self, store: Store, index_dir: Path, library: str):
        from math2.retrieval import Searcher

        self.searcher = Searcher(index_dir, store)
        self.library = library

    async def search(self, query: str, k: int) -> list[Hit]:
        """The top k declarations for a query."""
        found = await asyncio.to_thread(self.searcher.search, query, self.library, k)
        return [Hit(name=h.name, statement=h.statement[:400]) for h in found]


class NoSearchIndex(Math2Error):
    """A run that searches has no index to search; the message says how to build one, or to
    run with `--no-retrieval`."""


def index_identity(settings: Settings, library: str) -> str:
    """The index a run searches: `library@` and the first 12 hex digits of the SHA-256 of its
    `meta.json` (counts, versions, build time: a rebuilt index is another). Part of the run's
    key, so a run under another `--index` (or a rebuilt one) is another run. Raises
    NoSearchIndex, with the command that builds the index, where there is none."""
    from math2.retrieval import NoIndex, Searcher

    searcher = Searcher(Path(settings.retrieval.index_dir))
    try:
        searcher.scope(library)
    except NoIndex as exc:
        raise NoSearchIndex(
            f"formalize searches the {library} index before generating: {exc}; or run with "
            "--no-retrieval to formalize without search"
        ) from exc
    meta = searcher.built()[library] / "meta.json"
    return f"{library}@{hashlib.sha256(meta.read_bytes()).hexdigest()[:12]}"


def make_retriever(settings: Settings, store: Store, library: str) -> IndexRetriever | None:
    """The retriever over a library's built index, or None when there is none."""
    index_dir = Path(settings.retrieval.index_dir)
    if not (index_dir / library / "meta.json").exists():
        return None
    return IndexRetriever(store, index_dir, library)


def _record_accepted(
    s: Session, run_id: int, result: FormalizeResult, model_id: int, source: str
) -> tuple[int, int | None]:
    text_id, _ = record_agent_text(
        s,
        kind=AgentTextKind.FORMAL_STATEMENT,
        run_id=run_id,
        item=result.id,
        body=result.lean or "",
        source_text=result.statement,
        template=load_template("formalize/generate"),
        model_id=model_id,
        attempt_id=result.generate_attempt_id,
        extra={"passed_round": result.passed_round, "theorem": result.theorem, "source": source},
    )
    return text_id, _propose_binding(s, result, text_id)


def _propose_binding(s: Session, result: FormalizeResult, text_id: int) -> int | None:
    """An accepted statement for a node is that node's proposed binding (idempotent)."""
    from math2.roles.align.lifecycle import propose_binding
    from math2.store import AgentText, BindingOrigin, Node

    if not result.node:
        return None
    node_id = s.scalar(select(Node.id).where(Node.key == result.node))
    if node_id is None:
        return None
    text = s.get(AgentText, text_id)
    if text is not None and text.node_id is None:
        text.node_id = node_id
    b = propose_binding(
        s,
        node_id,
        BindingOrigin.FORMALIZE,
        agent_text_id=text_id,
        attempt_id=result.generate_attempt_id,
    )
    return b.id


@step("formalize.accept")
def accept():
    """Write each passed item's statement as agent text waiting for review (idempotent)."""

    async def run(result: FormalizeResult, ctx: ItemContext[RoleServices]) -> FormalizeResult:
        if result.outcome is not Outcome.PASSED:
            return result
        services = ctx.services
        # plain values: the closure may travel (Ray)
        model_id, run_id = services.model_id(services.spec.generator or ""), ctx.run_id
        source = result.source or ""  # the input's file:line (`--from`: the node's source)
        text_id, binding_id = await ctx.astore.write(
            lambda s: _record_accepted(s, run_id, result, model_id, source)
        )
        return result.model_copy(update={"agent_text_id": text_id, "binding_id": binding_id})

    return run


def run_key(input_path: Path, limit: int | None, index: str | None = None) -> str:
    """The run's input key: the file's digest and, with `--limit N`, that selection (a run of
    the first 2 items never reattaches to a run of all 16; `runs resume` reopens either), and
    the search index it searches (`index_identity`; None with --no-retrieval)."""
    digest = input_digest(input_path)
    key = f"{digest}:limit={limit}" if limit else digest
    return f"{key}:index={index}" if index else key


def build_job(options: FormalizeOptions, input_key: str) -> Job:
    """The job for these options over an input."""
    loop = formalize_loop(
        model=options.model,
        judge=options.judge,
        top_k=options.top_k,
        max_rounds=options.max_rounds,
        retrieval=options.retrieval,
        refine=options.refine,
        best_of_n=options.best_of_n,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
    )
    return Job(JOB, input_key, [loop, accept()])


def service_spec(options: FormalizeOptions) -> ServiceSpec:
    """What the formalize steps need: the generator, the judge, Lean and the retriever."""
    return ServiceSpec(
        generator=options.model,
        judges=(options.judge,),
        lean=True,
        lean_backend=options.lean_backend,
        retriever=functools.partial(make_retriever, library=options.index_library)
        if options.retrieval
        else None,
    )


def _resources(options: FormalizeOptions, settings: Settings):
    def resources(limiter) -> dict[str, Resource]:
        out = {
            "model": limiter(options.model),
            "lean": Resource("lean", max(1, settings.lean.workers)),
            "search": Resource("search", 1),
        }
        if options.judge != options.model:
            out["judge"] = limiter(options.judge)
        return out

    return resources


async def run_formalize(
    settings: Settings,
    store: Store,
    input_path: Path,
    options: FormalizeOptions,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    on_result: Callable[[Any, Any], None] | None = None,
    ray: RayOptions | None = None,
    resume: Resume | None = None,
    require_index: bool = True,
) -> RunSummary:
    """Formalize every statement of a JSONL file (or resume that run); on a Ray cluster when
    `ray` (a `RayOptions`) is given.

    Raises UnregisteredModel, LLMNotConfigured, LeanNotConfigured or InputError, each saying what
    to do, before any model call, and NoSearchIndex (with the command that builds the index)
    where the run would search an index that is not built. Only `require_index=False` runs such
    a run without search — each item's search attempt then says "no search index"; a run without
    search is `FormalizeOptions(retrieval=False)`. The index searched is part of the run's key.
    """
    input_path = Path(input_path)
    total = sum(1 for _ in read_inputs(input_path, options.field, options.limit))  # validate
    index = None
    if options.retrieval:
        try:
            index = index_identity(settings, options.index_library)
        except NoSearchIndex:
            if require_index:
                raise
    spec = resolve_spec(settings, store, service_spec(options))
    return await execute_role(
        settings,
        store,
        spec,
        build_job(options, run_key(input_path, options.limit, index)),
        read_inputs(input_path, options.field, options.limit),
        resources=_resources(options, settings),
        ray=ray,
        params={
            "input": str(input_path.resolve()),
            "options": options.model_dump(mode="json"),
            "index": index,
        },
        total=total,
        on_progress=on_progress,
        on_result=on_result,
        resume=resume,
    )


async def _resume(run: Run, settings: Settings, store: Store, resume: Resume) -> RunSummary:
    params = run.params or {}
    path = Path(params.get("input", ""))
    if not path.exists():
        raise CannotResume(f"run {run.id}: its input {path} is gone")
    options = FormalizeOptions.model_validate(params.get("options", {}))
    if run_key(path, options.limit) != run.key.split(":index=")[0]:
        raise CannotResume(f"run {run.id}: its input {path} has changed since the run started")
    recorded = params.get("index")
    if options.retrieval and recorded:  # it searched an index: the same one, or a new run
        index = index_identity(settings, options.index_library)
        if index != recorded:
            raise CannotResume(
                f"run {run.id}: it searched the index {recorded}, which is now {index} (rebuilt "
                "since): start a new run"
            )
    return await run_formalize(
        settings,
        store,
        path,
        options,
        on_progress=resume.on_progress,
        ray=resume.ray,
        resume=resume,
        require_index=bool(recorded),
    )


register_job(JOB, _resume)
