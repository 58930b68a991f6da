"""`math2 formalize INPUT.jsonl`: natural language in, Lean 4 statements out (MathForm's loop)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, check_backend, check_range, err, fail, out, state
from math2.cli._executor import Address, Executor, RaySet, ray_options
from math2.cli._outcome import finish_run

if TYPE_CHECKING:
    from math2.roles.formalize import FormalizeInput, FormalizeResult
    from math2.runs import RunSummary


def _budgets(values: list[str]) -> int | dict[str, int] | None:
    """`--max-tokens` values: one N (the generator's budget) or STAGE=N each."""
    from math2.roles.formalize.loop import STAGES

    if not values:
        return None
    plain = len(values) == 1 and "=" not in values[0]
    budgets: dict[str, int] = {}
    for v in [f"generate={values[0]}"] if plain else values:
        stage, _, n = v.partition("=")
        if stage not in STAGES:
            raise fail(f"--max-tokens {v}: the stage is one of {', '.join(STAGES)}")
        if not n.isdigit() or int(n) < 1:
            raise fail(f"--max-tokens {v}: a budget is a whole number of tokens, at least 1")
        budgets[stage] = int(n)
    return budgets["generate"] if plain else budgets


def _cross_inputs(store, system: str, refs: list[str]) -> Path:
    """The formalize input file for nodes of another system (K6.6, math2.roles.align.cross)."""
    import hashlib

    from math2.errors import Math2Error
    from math2.roles.align.cross import write_inputs

    digest = hashlib.sha256("\n".join([system, *refs]).encode()).hexdigest()[:16]
    path = Path(state.settings.retrieval.index_dir).parent / "cross" / f"{system}-{digest}.jsonl"
    try:
        with store.session() as s:
            return write_inputs(s, system, refs, path)
    except Math2Error as exc:
        raise fail(escape(str(exc))) from exc


@app.command("formalize")
def formalize_cmd(
    input_file: Annotated[
        list[str], typer.Argument(help="JSONL, one statement a line (with --from: NODE…).")
    ],
    model: Annotated[str, typer.Option(help="Generator (and planner) model, registered.")],
    judge: Annotated[str, typer.Option(help="Consistency judge model, registered.")],
    lean: Annotated[str | None, typer.Option(help="Lean backend: repl | kimina | lake.")] = None,
    top_k: Annotated[int, typer.Option(help="Mathlib hits per query given to the generator.")] = 2,
    max_rounds: Annotated[int, typer.Option(help="Refinement rounds at most.")] = 3,
    field: Annotated[
        str | None,
        typer.Option(help="Field with the statement (default: statement, informal_statement, …)."),
    ] = None,
    retrieval: Annotated[
        bool,
        typer.Option(
            help="Plan and search the --index library (refused where it is not built); "
            "--no-retrieval formalizes without search (ablation)."
        ),
    ] = True,
    refine: Annotated[bool, typer.Option(help="Refine with feedback (ablation: off).")] = True,
    best_of_n: Annotated[
        int, typer.Option(help="Independent single-round samples instead of refinement.")
    ] = 1,
    temperature: Annotated[float, typer.Option(help="Generator temperature.")] = 0.7,
    limit: Annotated[int | None, typer.Option(help="Only the first N statements.")] = None,
    max_tokens: Annotated[
        list[str] | None,
        typer.Option(
            help="Token budget per reply: N for the generator, or STAGE=N for plan, generate or "
            "judge (repeatable; default: each template's max_tokens).",
        ),
    ] = None,
    index: Annotated[str, typer.Option(help="Library whose search index is used.")] = "mathlib",
    executor: Executor = "local",
    address: Address = None,
    ray_set: RaySet = None,
    from_system: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="setmm | mizar | afp: the arguments are nodes or declarations of that library, "
            "formalized with the source declaration in the context.",
        ),
    ] = None,
) -> None:
    """Formalize every statement: plan → retrieve → generate → compile → judge → refine."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import InputError, Math2Error
    from math2.llm import EndpointDown
    from math2.roles.formalize import FormalizeOptions, run_formalize

    check_range("--top-k", top_k, 0)
    check_range("--max-rounds", max_rounds, 1)
    check_range("--best-of-n", best_of_n, 1)
    check_range("--limit", limit, 1)
    check_backend(lean)
    if best_of_n > 1 and not refine:
        raise fail("--best-of-n already means single-round samples; drop --no-refine")
    budgets = _budgets(max_tokens or [])
    options = FormalizeOptions(
        model=model,
        judge=judge,
        top_k=top_k,
        max_rounds=max_rounds,
        retrieval=retrieval,
        refine=refine,
        best_of_n=best_of_n,
        temperature=temperature,
        max_tokens=budgets,
        field=field,
        limit=limit,
        lean_backend=lean,
        index_library=index,
    )
    settings = state.settings
    store = _store(migrate=True)
    ray = ray_options(executor, address, store, ray_set)
    if from_system is not None:
        input_path = _cross_inputs(store, from_system, input_file)
    elif len(input_file) != 1:
        raise fail("give one JSONL file (or --from setmm|mizar|afp and node keys)")
    else:
        input_path = Path(input_file[0])
    rounds: Counter[int] = Counter()  # passed items by the round they passed in
    outcomes: Counter[str] = Counter()
    compiled_by: Counter[str] = Counter()  # the Lean behind each compile verdict

    def tally(_rec: FormalizeInput, result: FormalizeResult) -> None:
        outcomes[result.outcome.value] += 1
        if result.passed_round is not None:
            rounds[result.passed_round] += 1
        compiled_by.update(r.compiled_by for r in result.rounds if r.compiled_by)

    try:
        with ProgressDisplay(err) as show:
            summary = asyncio.run(
                run_formalize(
                    settings,
                    store,
                    input_path,
                    options,
                    on_progress=show,
                    on_result=tally,
                    ray=ray,
                )  # refused (NoSearchIndex) where --index is not built: the library's check
            )
    except EndpointDown as exc:  # the run stopped early; its unfinished items wait for a resume
        raise fail(escape(str(exc)), code=1) from exc
    except (InputError, Math2Error) as exc:
        raise fail(escape(str(exc))) from exc
    out.print(
        escape(summary_line(summary, outcomes, rounds, compiled_by)),
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        escape(f"see `math2 runs show {summary.run_id}`; accepted statements wait for review")
    )
    finish_run(store, summary.run_id)


def summary_line(
    summary: RunSummary, outcomes: Counter[str], rounds: Counter[int], lean: Counter[str]
) -> str:
    """The end of `math2 formalize`: items by outcome (one with no Lean, or with every block
    refused, is a failure), the round each passed item passed in, and the Lean that produced the
    compile verdicts as it reported itself (a test double says so), or that none ran."""
    from math2.roles.formalize import Outcome

    by_round = ", ".join(f"round {r}: {n}" for r, n in sorted(rounds.items()))
    passed = f"{outcomes[Outcome.PASSED.value]} passed" + (f" — {by_round}" if by_round else "")
    failed = [o.value for o in Outcome if o is not Outcome.PASSED]
    why = ", ".join(f"{o} {outcomes[o]}" for o in failed if outcomes[o])
    n_failed = sum(outcomes[o] for o in failed)
    if lean:
        compiled = "compiled by: " + "; ".join(sorted(lean))
    else:
        compiled = "nothing reached Lean" if summary.done else "no item ran this time"
    return (
        f"run {summary.run_id}: {summary.done} formalized this time ({passed}; {n_failed} "
        f"failed{f': {why}' if why else ''}), {summary.failed} stopped by an exception, "
        f"{summary.skipped} already finished; {compiled}"
    )
