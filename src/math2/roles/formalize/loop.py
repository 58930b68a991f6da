"""MathForm's loop for one statement, as a registered step of `math2.runs`.

plan retrieval → retrieve top-k → generate → extract the Lean block → hygiene + compile →
consistency judge (six defect kinds) → refine with that feedback (re-retrieving when the judge or
Lean asks), at most `max_rounds` rounds, stopping when both checks pass.

Ablations: `retrieval=False` (no planner, no search), `refine=False` (one round), and
`best_of_n=N` (N independent single-round samples, the seed's equal-budget baseline: pass when
any sample passes both checks).

The step's services are `ctx.services`, a `math2.services.RoleServices`: `generator` and
`judge` (LLMClient), `checker` (LeanChecker), `retriever` (an object with
`async search(query, k) -> list[Hit]`, or None), and `header` (the import header).
"""

from __future__ import annotations

from typing import Any

from math2.judging import judge_in_run, judge_template
from math2.lean import CheckItem, Mode
from math2.lean.trust import ContextTrust
from math2.llm import load_template
from math2.llm.stream import TIMEOUT
from math2.roles.formalize.feedback import (
    compile_feedback,
    extract,
    judge_feedback,
    names_unknown,
    theorem_name,
)
from math2.roles.formalize.records import (
    FormalizeInput,
    FormalizeResult,
    Hit,
    Outcome,
    RoundLog,
)
from math2.roles.formalize.schemas import PlannerDecision
from math2.runs import ItemContext, step
from math2.services import RoleServices

STAGES = ("plan", "generate", "judge")  # the stages with a token budget


def budget(max_tokens: int | dict[str, int] | None, stage: str, template_budget: int | None):
    """A stage's token budget: `max_tokens[stage]` when a mapping names it, an int for the
    generator, else the template's."""
    if isinstance(max_tokens, dict):
        return max_tokens.get(stage) or template_budget
    if max_tokens and stage == "generate":
        return max_tokens
    return template_budget


async def _retrieve(
    ctx: ItemContext[RoleServices],
    rec: FormalizeInput,
    log: RoundLog,
    queries_so_far: list[str],
    feedback: str,
    top_k: int,
    round_: int,
    sample: int,
    extra_queries: list[str],
    max_tokens: int | dict[str, int] | None = None,
) -> list[Hit]:
    """Ask the planner, then search; the hits the generator will see (deduplicated)."""
    services: RoleServices = ctx.services
    retriever = services.retriever
    planner = load_template("formalize/planner")
    decision, aid = await ctx.structured(
        services.generator,
        planner,
        {"statement": rec.statement, "queries": queries_so_far, "feedback": feedback},
        PlannerDecision,
        stage="plan",
        round=round_,
        sample=sample,
        temperature=0.0,
        max_tokens=budget(max_tokens, "plan", planner.max_tokens),
    )
    log.attempt_ids.append(aid)
    queries = list(extra_queries)
    if decision.ok and decision.value.search:
        queries += decision.value.queries
    queries = [q.strip() for q in dict.fromkeys(queries) if q.strip()][:5]
    log.queries = queries
    if not queries:
        return []
    request = {"queries": queries, "top_k": top_k}
    if retriever is None:
        # The planner asked, but there is nothing to search: the attempt says so.
        log.search_note = (
            "no search index: the queries returned nothing (build one with `math2 index build`)"
        )
        aid = await ctx.attempt(
            stage="search", round=round_, sample=sample, request=request, error=log.search_note
        )
        log.attempt_ids.append(aid)
        return []
    hits: dict[str, Hit] = {}
    async with ctx.slot("search"):
        for q in queries:
            for h in await retriever.search(q, top_k):
                hits.setdefault(h.name, h)
    found = list(hits.values())
    aid = await ctx.attempt(
        stage="search",
        round=round_,
        sample=sample,
        request=request,
        response={"hits": [h.model_dump() for h in found]},
    )
    log.attempt_ids.append(aid)
    return found


@step("formalize.loop")
def formalize_loop(
    model: str,
    judge: str,
    top_k: int = 2,
    max_rounds: int = 3,
    retrieval: bool = True,
    refine: bool = True,
    best_of_n: int = 1,
    temperature: float = 0.7,
    max_tokens: int | dict[str, int] | None = None,
):
    """The formalize step; its arguments (the two models and the switches) make the spec.

    Token budgets per stage come from the templates' `max_tokens`; `max_tokens` here (the
    CLI's `--max-tokens`) overrides the generator's (an int) or those of the stages it names
    (a mapping: plan, generate, judge)."""
    rounds = max_rounds if refine and best_of_n == 1 else 1
    samples = best_of_n

    async def run(rec: FormalizeInput, ctx: ItemContext[RoleServices]) -> FormalizeResult:
        gen_t = load_template("formalize/generate")
        judge_t = judge_template()
        services: RoleServices = ctx.services
        header = services.header
        if rec.header:
            header = header + "\n" + rec.header
        result = FormalizeResult(
            id=rec.id,
            statement=rec.statement,
            outcome=Outcome.NO_LEAN,
            node=rec.node,
            source=rec.source,
        )
        for sample in range(rec.sample, rec.sample + samples):
            queries: list[str] = []
            hits: list[Hit] = []
            previous: str | None = None
            feedback = ""
            want_search = retrieval
            extra: list[str] = []
            for rnd in range(1, rounds + 1):
                log = RoundLog(round=rnd, sample=sample)
                result.rounds.append(log)
                if want_search:
                    hits = await _retrieve(
                        ctx, rec, log, queries, feedback, top_k, rnd, sample, extra, max_tokens
                    )
                    queries += log.queries
                    log.hits = hits
                variables: dict[str, Any] = {
                    "statement": rec.statement,
                    "hits": [h.model_dump() for h in hits],
                    "previous": previous,
                    "feedback": feedback,
                    "round": rnd,
                }
                reply, gen_aid = await ctx.chat(
                    services.generator,
                    gen_t,
                    variables,
                    stage="generate",
                    round=rnd,
                    sample=sample,
                    temperature=temperature,
                    max_tokens=budget(max_tokens, "generate", gen_t.max_tokens) or 1024,
                )
                log.attempt_ids.append(gen_aid)
                log.finish_reason = reply.finish_reason
                ex = extract(reply.content)
                lean, dropped = ex.code, ex.dropped
                log.extraction, log.extraction_note = ex.source, ex.note
                if lean is None:
                    feedback = (
                        f"Your previous answer (round {rnd}) gave no Lean to check: {ex.note}. "
                        "Answer with exactly one theorem inside one ```lean block."
                    )
                    if reply.finish_reason == "length":
                        feedback += " It was cut off at the token limit: be shorter."
                    elif reply.finish_reason == TIMEOUT:
                        feedback += " It was cut off at the time limit: be shorter."
                    log.feedback = feedback
                    want_search = False
                    continue
                log.lean = lean
                code = header + "\n\n" + lean
                check, lean_aid = await ctx.lean(
                    services.checker,
                    CheckItem(
                        id=f"{rec.id}/s{sample}/r{rnd}",
                        code=code,
                        mode=Mode.STATEMENT,
                        trust=ContextTrust.GENERATED,
                    ),
                    round=rnd,
                    sample=sample,
                )
                log.attempt_ids.append(lean_aid)
                log.compile_status = check.status.value
                log.compile_passed = check.passed
                log.compiled_by = check.compiled_by
                refused = check.status.value == "rejected"
                if result.outcome is Outcome.NO_LEAN or (
                    result.outcome is Outcome.REFUSED and not refused
                ):
                    result.outcome = Outcome.REFUSED if refused else Outcome.FAILED
                if not check.passed:
                    feedback = compile_feedback(check)
                    if dropped:
                        feedback += "\n(Import lines were removed: do not write imports.)"
                    log.feedback = feedback
                    unknown = names_unknown(check)
                    want_search = retrieval and bool(unknown)
                    extra = unknown
                    previous = lean
                    continue
                verdict, judge_aid = await judge_in_run(
                    ctx,
                    services.judge,
                    rec.statement,
                    lean,
                    stage="judge",
                    round=rnd,
                    sample=sample,
                    max_tokens=budget(max_tokens, "judge", judge_t.max_tokens),
                )
                log.attempt_ids.append(judge_aid)
                if not verdict.ok:
                    log.judge_error = verdict.error
                    feedback = (
                        "The consistency judge's answer could not be read, so the statement is "
                        "not accepted. Check it against the text once more."
                    )
                    log.feedback = feedback
                    previous, want_search, extra = lean, False, []
                    continue
                v = verdict.value
                log.consistent = v.passed()
                log.defects = v.defects
                if v.passed():
                    result.outcome = Outcome.PASSED
                    result.passed_round = rnd
                    result.lean = code
                    result.theorem = theorem_name(lean)
                    result.generate_attempt_id = gen_aid
                    return result
                feedback = judge_feedback(v)
                log.feedback = feedback
                previous = lean
                want_search = retrieval and v.needs_retrieval
                extra = list(v.queries)
        return result

    return run
