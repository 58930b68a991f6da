"""`math2 eval …`: benchmarks, the pass@k SC/CC harness, reports, decontamination."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, check_backend, check_range, err, fail, out, state
from math2.cli._executor import Address, Executor, RaySet, ray_options
from math2.cli._outcome import finish_run

if TYPE_CHECKING:
    from math2.eval import Scores

eval_app = typer.Typer(help="Evaluation: benchmarks, pass@k SC/CC, reports.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")

DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Folder of minif2f.jsonl / proofnet.jsonl (DeepSeek-Prover-V1.5's format; "
        "evaluation-only text, not shipped) and fate_m.json. Default: MATH2_BENCHMARKS, else "
        "the FATE-M data set (`math2 data fetch fate-m`, or MATH2_DATA__DIR).",
    ),
]
_DATA = None


def benchmarks_dir(data: Path | None, quiet: bool = False) -> Path:
    """The benchmark folder: --data, else MATH2_BENCHMARKS, else the FATE-M data set's folder
    (hash-checked; missing: one line saying how to get it, exit 2 — or, `quiet`, DataMissing
    for a caller that can do without it)."""
    if data is not None:
        return data
    if env := os.environ.get("MATH2_BENCHMARKS"):
        return Path(env)
    from math2.data import DataMismatch, DataMissing, locate

    try:
        return locate(state.settings, "fate-m")
    except DataMissing as exc:
        if quiet:
            raise
        raise fail(escape(str(exc))) from exc
    except DataMismatch as exc:
        raise fail(escape(str(exc))) from exc


HarnessOpt = Annotated[
    list[Path] | None,
    typer.Option("--harness", help="A file in MathForm's harness format (repeatable)."),
]


def _folder(data: Path | None, harness: list[Path] | None) -> Path | None:
    """The benchmark folder; None where harness files are given and the folder is absent (the
    harness files alone are the benchmarks)."""
    from math2.data import DataMissing

    try:
        return benchmarks_dir(data, quiet=bool(harness))
    except DataMissing:
        return None


def _registry(data: Path | None, harness: list[Path] | None):
    from math2.eval import load_registry

    folder = _folder(data, harness)
    reg = load_registry(folder, harness or [])
    if not len(reg):
        raise fail(f"no benchmarks: {folder} does not exist and no --harness file was given")
    return reg


@eval_app.command("benchmarks")
def benchmarks_cmd(data: DataOpt = _DATA, harness: HarnessOpt = None) -> None:
    """List registered benchmark versions: name@lineage, items, hash, toolchain, defects."""
    reg = _registry(data, harness)
    for v in reg:
        kinds: dict[str, int] = {}
        for d in v.defects:
            kinds[d.kind] = kinds.get(d.kind, 0) + 1
        out.print(
            escape(
                f"{v.label}  items={len(v.items)}  sha256={v.version_hash}  "
                f"toolchain={v.toolchain or '(' + v.toolchain_note + ')'}  defects={kinds or 0}"
            ),
            highlight=False,
        )


@eval_app.command("run")
def run_cmd(
    model: Annotated[str, typer.Option(help="Model under evaluation, registered.")],
    judge: Annotated[list[str], typer.Option(help="Consistency judge, registered (repeatable).")],
    k: Annotated[int, typer.Option("-k", help="Samples per item.")] = 8,
    report: Annotated[Path | None, typer.Option(help="Write the report into this folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N items of each.")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    lean: Annotated[str | None, typer.Option(help="Lean backend: repl | kimina | lake.")] = None,
    data: DataOpt = _DATA,
    harness: HarnessOpt = None,
    loop: Annotated[
        bool, typer.Option(help="Each sample through the full formalize loop (refinement).")
    ] = False,
    max_rounds: Annotated[int, typer.Option(help="Rounds of the loop with --loop.")] = 3,
    benchmark: Annotated[
        list[str] | None,
        typer.Option(
            help="name, name@lineage or hash (repeatable; default: every benchmark in --harness)."
        ),
    ] = None,
    executor: Executor = "local",
    address: Address = None,
    ray_set: RaySet = None,
) -> None:
    """Draw k samples per item, compile, judge; print SC/CC pass@k (resumes a killed run)."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import Math2Error
    from math2.eval import EvalOptions, UnknownBenchmark, render_table, run_eval, score
    from math2.eval import write_report as write
    from math2.eval.harness import benchmark_sources
    from math2.eval.report import compiled_by_text
    from math2.llm import EndpointDown

    check_range("-k", k, 1)
    check_range("--limit", limit, 1)
    check_range("--max-rounds", max_rounds, 1)
    check_range("--temperature", temperature, 0.0, 2.0)
    check_backend(lean)
    reg = _registry(data, harness)
    if not benchmark:
        from math2.eval import load_harness_jsonl

        if not harness:
            raise fail("name the benchmarks (--benchmark NAME) or give --harness FILE")
        benchmark = [
            f"{name.lower()}@harness:{h.name}" for h in harness for name in load_harness_jsonl(h)
        ]
        err.print(
            "no --benchmark: evaluating every benchmark of the harness file(s): "
            + ", ".join(benchmark),
            highlight=False,
        )
    try:
        versions = [reg.get(b) for b in benchmark]
    except UnknownBenchmark as exc:
        raise fail(
            f"{exc}; miniF2F and ProofNet are not shipped with math2 (their informal text is for "
            "evaluation only): name a folder holding minif2f.jsonl / proofnet.jsonl with --data "
            "or MATH2_BENCHMARKS"
        ) from exc
    options = EvalOptions(
        model=model,
        judges=judge,
        k=k,
        limit=limit,
        temperature=temperature,
        lean_backend=lean,
        loop=loop,
        max_rounds=max_rounds,
    )
    store = _store(migrate=True)
    ray = ray_options(executor, address, store, ray_set)
    try:
        with ProgressDisplay(err) as show:
            summary, samples = asyncio.run(
                run_eval(
                    state.settings,
                    store,
                    versions,
                    options,
                    on_progress=show,
                    ray=ray,
                    sources=benchmark_sources(_folder(data, harness), harness),
                )
            )
    except EndpointDown as exc:  # the run stopped early; its unfinished items wait for a resume
        raise fail(escape(str(exc)), code=1) from exc
    except Math2Error as exc:
        raise fail(str(exc)) from exc
    if not samples:
        raise fail(f"run {summary.run_id}: no samples")
    ks = sorted({1, k} | {2**i for i in range(1, 8) if 2**i < k})
    scores = score(samples, ks, model=model, judges=judge)
    out.print(escape(render_table(scores)), highlight=False, soft_wrap=True)
    failed = sum(b.failed for b in scores.benchmarks)
    total = sum(b.samples for b in scores.benchmarks)
    out.print(
        escape(
            f"run {summary.run_id}: {summary.done} samples this time, {summary.failed} of them "
            f"stopped by an exception; {failed} of the run's {total} samples failed (each "
            f"scored 0); compiled by: {compiled_by_text(scores.compiled_by)}"
        ),
        highlight=False,
        soft_wrap=True,
    )
    _print_failures(scores)
    if report:
        files = write(scores, report)
        out.print(escape(f"report: {files['html']}"))
    finish_run(store, summary.run_id, "samples")


def _print_failures(scores: Scores) -> None:
    """How many samples failed and why (each is scored as a failure, k unchanged)."""
    for b in scores.benchmarks:
        why = ", ".join(f"{r}: {n}" for r, n in b.failures.items()) or "none"
        out.print(
            escape(f"{b.benchmark}: {b.failed} of {b.samples} samples failed ({why})"),
            highlight=False,
        )


@eval_app.command("report")
def report_cmd(
    run: Annotated[int, typer.Option(help="The eval run (see `math2 runs list`).")],
    folder: Annotated[Path, typer.Argument(help="Folder for table.md, PNGs, report.html.")],
    k: Annotated[
        list[int] | None, typer.Option("-k", help="k values (default 1, 2, 4, … n).")
    ] = None,
) -> None:
    """Score a finished (or partial) eval run and write the report files."""
    from math2.eval import collect_results, render_table, score, write_report
    from math2.eval.report import compiled_by_text
    from math2.runs import run_detail

    store = _store()
    with store.session() as s:
        detail = run_detail(s, run)
    if detail is None or detail.job != "eval":
        raise fail(f"run {run} is not an eval run (see `math2 runs list`)")
    samples = collect_results(store, run)
    if not samples:
        raise fail(f"run {run} has no samples")
    n = min(
        sum(1 for s in samples if (s.benchmark, s.item) == key)
        for key in {(s.benchmark, s.item) for s in samples}
    )
    ks = sorted(set(k)) if k else sorted({1, n} | {2**i for i in range(1, 8) if 2**i < n})
    if max(ks) > n:
        raise fail(f"k={max(ks)} is more than the {n} samples some item has")
    opts = (detail.params or {}).get("options", {})
    scores = score(samples, ks, model=opts.get("model", f"run {run}"))
    files = write_report(scores, folder)
    out.print(escape(render_table(scores)), highlight=False, soft_wrap=True)
    _print_failures(scores)
    out.print(escape(f"compiled by: {compiled_by_text(scores.compiled_by)}"), highlight=False)
    out.print(escape(f"report: {files['html']}"))


@eval_app.command("decontam")
def decontam_cmd(
    input_file: Annotated[Path, typer.Argument(help="JSONL dataset.")],
    output: Annotated[Path, typer.Argument(help="JSONL written: kept (or flagged) records.")],
    field: Annotated[list[str], typer.Option(help="Text field to check (repeatable).")],
    flag: Annotated[bool, typer.Option(help="Flag instead of drop.")] = False,
    n: Annotated[int, typer.Option(help="n-gram length.")] = 13,
    data: DataOpt = _DATA,
    harness: HarnessOpt = None,
) -> None:
    """Drop (or flag) records sharing an n-gram with any registered benchmark."""
    from math2.errors import InputError
    from math2.eval import Decontaminator, Mode
    from math2.util.jsonl import read_jsonl

    reg = _registry(data, harness)

    def records():
        return (rec for _, rec in read_jsonl(input_file))

    if not input_file.exists():
        raise fail(f"{input_file}: no such file")
    kept, rep = Decontaminator(reg, n=n).run(records(), field, Mode.FLAG if flag else Mode.DROP)
    tmp = output.with_suffix(".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for rec in kept:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    except InputError as exc:
        tmp.unlink(missing_ok=True)
        raise fail(str(exc)) from exc
    tmp.replace(output)
    out.print_json(rep.model_dump_json())
