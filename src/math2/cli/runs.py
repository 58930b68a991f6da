"""`math2 runs …`: list runs, show one, resume one; `math2 models …`: the model register."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from math2.cli._common import _store, app, err, fail, out, state
from math2.cli._executor import Address, RaySet, ray_options
from math2.cli._ray_actors import actors_app

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from math2.lean import LeanIdentity
    from math2.runs import RunDetail, SegmentRow
    from math2.store import Run

runs_app = typer.Typer(help="Long jobs: list, show and resume runs.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
runs_app.add_typer(actors_app, name="actors")
models_app = typer.Typer(help="The model register (rule X08).", no_args_is_help=True)
app.add_typer(models_app, name="models")


@runs_app.command("list")
def runs_list(
    job: Annotated[str | None, typer.Option(help="Only runs of this job.")] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
) -> None:
    """The newest runs with their item counts per state."""
    from math2.runs import list_runs

    store = _store()
    with store.session() as s:
        rows = list_runs(s, job, limit)
    table = Table(title=f"{len(rows)} runs")
    for col in ("id", "job", "input", "spec", "status", "items", "attempts", "finished"):
        table.add_column(col)
    for r in rows:
        items = ", ".join(f"{k} {v}" for k, v in sorted(r.items.items())) or "-"
        table.add_row(
            str(r.id),
            r.job,
            escape(r.key[:40]),
            r.spec_hash[:10] or "-",
            r.status,
            items,
            str(r.attempts),
            str(r.finished_at or "-")[:19],
        )
    out.print(table)


@runs_app.command("show")
def runs_show(
    run_id: Annotated[int, typer.Argument(help="The run's id.")],
    item: Annotated[str | None, typer.Option(help="Show this item's trajectory.")] = None,
) -> None:
    """One run: spec, parameters, counts, statistics, failing items (or one item's attempts)."""
    from math2.runs import item_attempts, run_detail

    store = _store()
    with store.session() as s:
        d = run_detail(s, run_id)
        if d is None:
            raise fail(f"no run {run_id} in the store (see `math2 runs list`)")
        attempts = item_attempts(s, run_id, item) if item else []
    if item:
        if not attempts:
            raise fail(f"run {run_id} has no attempts for item {item!r}")
        for a in attempts:
            out.print(
                f"round {a.round} · {a.stage} · sample {a.sample} · {a.model or '-'} · "
                f"{a.template_id or '-'} · verdict {a.verdict or '-'}"
                + (" · cached" if a.cached else "")
                + f" · {a.duration_s:.2f}s",
                highlight=False,
            )
            if a.error:
                out.print("    error: " + escape(a.error[:500]), highlight=False)
        return
    status = d.status + (f" (driven by {d.holder})" if d.holder else "")
    out.print(f"run {d.id}: {d.job} on {escape(d.key)} · status {status}", highlight=False)
    out.print(f"spec {d.spec_hash}: " + escape(json.dumps(d.spec, ensure_ascii=False)))
    out.print("params: " + escape(json.dumps(d.params, ensure_ascii=False, default=str)))
    lean = _lean_line(d)
    if lean:
        out.print(escape(lean), highlight=False)
    out.print(escape(_executor_line(d)), highlight=False)
    if d.segments:
        out.print("segments (each time the run was driven):")
        for n, seg in enumerate(d.segments, 1):
            for line in _segment_lines(n, seg, d.lean):
                out.print(escape(line), highlight=False)
    out.print("items: " + (", ".join(f"{k} {v}" for k, v in sorted(d.items.items())) or "none"))
    out.print(f"attempts: {d.attempts}")
    if d.stats:
        out.print("stats: " + escape(json.dumps(d.stats, ensure_ascii=False)))
    if d.outcomes:
        out.print("outcomes:")
        for name, n in sorted(d.outcomes.items(), key=lambda kv: -kv[1]):
            eg = ", ".join(d.outcome_examples.get(name, []))
            out.print(f"  {name} {n}" + (f" (e.g. {escape(eg)})" if eg else ""), highlight=False)
    out.print(
        f"time: model {d.model_s:.1f}s, queued {d.queue_s:.1f}s (waiting for a model slot or a "
        f"retry), Lean {d.lean_s:.1f}s; {d.cached_attempts} attempts answered from the caches",
        highlight=False,
    )
    if d.finish_reasons:
        out.print(
            "replies: " + ", ".join(f"{k} {v}" for k, v in sorted(d.finish_reasons.items())),
            highlight=False,
        )
    if d.calls_failed or d.failed_tries:
        tries = ", ".join(f"{k} {v}" for k, v in sorted(d.failed_tries.items())) or "none"
        out.print(
            f"model calls with no reply: {d.calls_failed}; failed tries: {tries}", highlight=False
        )
    for i, defs in sorted(d.defects.items()):
        out.print(f"  defects {escape(i)}: " + escape("; ".join(defs))[:300], highlight=False)
    for i, e in d.failed_items:
        out.print(f"  failed {escape(i)}: " + escape((e or "")[:300]), highlight=False)


def _lean_line(d: RunDetail) -> str | None:
    """Which Lean produced the run's verdicts: the one its spec names, else the ones its checks
    name (a run from before runs named their Lean); None for a run that checked nothing."""
    if d.lean is not None:
        return f"Lean: {d.lean.label()}"
    if d.leans:
        return "Lean (as its verdicts name it): " + "; ".join(d.leans)
    return None


def _executor_line(d: RunDetail) -> str:
    """The executor of the run's last segment (or, for an older run, of its params)."""
    last = d.segments[-1] if d.segments else None
    executor = last.executor if last is not None else (d.params or {}).get("executor", "local")
    nodes = (last.stats if last is not None else d.params or {}).get("nodes") or []
    on = f" on {len(nodes)} node(s): {', '.join(nodes)}" if nodes else ""
    where = f" · cluster {last.address}" if last is not None and last.address else ""
    return f"executor: {executor}{on}{where}"


def _segment_lines(n: int, seg: SegmentRow, lean: LeanIdentity | None) -> list[str]:
    st = seg.stats
    when = f"{seg.started_at:%Y-%m-%d %H:%M:%S}" if seg.started_at else "?"
    if seg.ended_at:
        when += f" → {seg.ended_at:%H:%M:%S}"
    where = seg.executor + (f" at {seg.address}" if seg.address else "")
    counts = ", ".join(
        f"{st[k]} {k.replace('_', ' ')}" for k in ("done", "failed", "skipped") if k in st
    )
    per_node = ", ".join(f"{k} {v}" for k, v in sorted((st.get("items_per_node") or {}).items()))
    lines = [
        f"  {n}. {where} · {seg.host} pid {seg.pid} · {when} · {seg.status}"
        + (f" · {counts}" if counts else "")
        + (f" · items per node: {per_node}" if per_node else "")
    ]
    if seg.executor == "ray" and seg.options:
        lines.append("     " + _ray_line(seg.options, st))
    for node, why in sorted((st.get("refused_nodes") or {}).items()):
        lines.append(f"     refused {node}: {why}")
    if seg.reason:
        lines.append(f"     why: {seg.reason}")
    if seg.lean is not None and seg.lean != lean:
        lines.append(f"     Lean: {seg.lean.label()}")
    for change in seg.changes:
        lines.append(f"     changed: {change}")
    return lines


def _ray_line(options: dict[str, Any], stats: dict[str, Any]) -> str:
    """A Ray segment's limits: its batches, the items in flight per node (and the most it had
    in flight), each endpoint's cluster-wide bound (and the most calls it had in flight), the
    writer's commits."""
    flight = stats.get("in_flight") or {}
    per_node = flight.get("per_node", options.get("items_per_node"))
    bound = (
        f"≤ {per_node} items in flight per node"
        if per_node is not None  # a segment killed before it recorded the bound it used
        else "items in flight per node from its capacities"
    )
    parts = [f"batches of {options.get('batch_size')}", bound]
    if "most" in flight:
        parts[-1] += f" (most {flight['most']} in all)"
    for key, lim in sorted((stats.get("limits") or {}).items()):
        if "unavailable" in lim:
            parts.append(f"{key}: its limiter's figures were out of reach ({lim['unavailable']})")
        else:
            part = f"{key}: ≤ {lim['capacity']} calls at once (most {lim['max_in_flight']})"
            if dropped := sum((lim.get("dropped") or {}).values()):
                part += f", {dropped} permits or requests of dead callers dropped"
            parts.append(part)
    writer = stats.get("writer") or {}
    if writer.get("commits"):
        parts.append(f"{writer['writes']} writes in {writer['commits']} commits")
    return "ray: " + " · ".join(parts)


def _recorded_executor(s: Session, run: Run) -> tuple[str, dict[str, Any]]:
    """The executor the run was last driven on, with its options (Ray: the address, batch
    size, items per node, …)."""
    from sqlalchemy import select

    from math2.store import RunSegment

    last = s.scalars(
        select(RunSegment).where(RunSegment.run_id == run.id).order_by(RunSegment.id.desc())
    ).first()
    if last is not None:
        return last.executor, {**(last.options or {}), "address": last.address}
    params = run.params or {}
    return str(params.get("executor") or "local"), {"address": params.get("address")}


@runs_app.command("resume")
def runs_resume(
    run_id: Annotated[int, typer.Argument(help="The run's id.")],
    executor: Annotated[
        str | None,
        typer.Option(
            "--executor",
            help="local or ray (default: the executor the run was last driven on, with its "
            "Ray address).",
        ),
    ] = None,
    address: Address = None,
    ray_set: RaySet = None,
    allow_changed: Annotated[
        bool,
        typer.Option(
            "--allow-changed",
            help="Go on when the run's spec would now be another (another Lean, model or "
            "setting); the segment records what changed. Without it such a resume is refused.",
        ),
    ] = False,
) -> None:
    """Start a run again where it stopped: done items skipped, finished calls from the caches,
    on the executor it was driven on. Refused (exit 2) while another driver holds the run."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import Math2Error
    from math2.runs import Resume, resumer
    from math2.runs.queries import holder
    from math2.store import Run

    store = _store()
    with store.session() as s:
        run = s.get(Run, run_id)
        if run is None:
            raise fail(f"no run {run_id} in the store (see `math2 runs list`)")
        held = holder(s, run_id)
        recorded, recorded_options = _recorded_executor(s, run)
        s.expunge(run)
    if held is not None:
        raise fail(escape(f"run {run_id} is being driven by {held}: wait for it to end"))
    if executor is None:  # the run's own executor (`--address` alone means Ray there)
        executor = "ray" if address else recorded
    # on the executor it recorded, with the options it recorded; --address and --ray-option win
    ray = ray_options(
        executor,
        address if executor == "ray" else None,
        store,
        ray_set,
        recorded=recorded_options if recorded == "ray" else None,
    )
    try:
        resume_fn = resumer(run.job)
        with ProgressDisplay(err) as show:
            resume = Resume(run_id, allow_changed=allow_changed, ray=ray, on_progress=show)
            summary = asyncio.run(resume_fn(run, state.settings, store, resume))
    except Math2Error as exc:  # held meanwhile, a changed spec, a job that cannot resume
        raise fail(escape(str(exc))) from exc
    ok = summary.done - summary.failed_results
    failed = summary.failed + summary.failed_results
    out.print(
        f"run {summary.run_id}: {ok} done, {failed} failed, {summary.skipped} already finished"
        + (f" (on {executor})" if executor != "local" else ""),
        highlight=False,
    )
    with store.session() as s:
        d = _detail(s, summary.run_id)
    now = d.segments[-1].lean if d.segments else None  # the Lean of this drive
    lean = f"verdicts by Lean: {now.label()}" if now is not None else _lean_line(d)
    if lean:
        out.print(escape(lean), highlight=False)
    from math2.cli._outcome import finish_run

    finish_run(store, summary.run_id)


def _detail(s: Session, run_id: int) -> RunDetail:
    from math2.runs import run_detail

    d = run_detail(s, run_id)
    if d is None:
        raise fail(f"no run {run_id} in the store")
    return d


@models_app.command("add")
def models_add(
    name: Annotated[str, typer.Argument(help="The model's name (as roles will name it).")],
    revision: Annotated[str, typer.Option(help="Revision or checkpoint.")] = "",
    provider: Annotated[str | None, typer.Option(help="Who serves or publishes it.")] = None,
    terms: Annotated[str | None, typer.Option(help="Its licence or terms of use.")] = None,
    notes: Annotated[str | None, typer.Option(help="Anything else worth keeping.")] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace the entry of a model already registered.")
    ] = False,
) -> None:
    """Register a model, so roles may use it to write text (rule X08)."""
    from math2.llm import add_model

    if not (provider or "").strip() or not (terms or "").strip():
        raise fail("a model is registered with its --provider and its --terms (licence or terms)")
    from math2.util.textlimit import too_long

    for flag, value in (("--provider", provider), ("--terms", terms), ("--notes", notes)):
        if value is not None and (reason := too_long(value, flag)) is not None:
            raise fail(reason)
    store = _store(migrate=True)
    try:
        with store.session() as s:
            entry, new = add_model(
                s, name, revision=revision, provider=provider, terms=terms, notes=notes
            )
            if not new and not replace:
                # raised inside the session: nothing of the update is committed
                raise fail(f"model {name!r} is already registered; --replace to replace it")
            mid = entry.id
    except ValueError as exc:
        raise fail(str(exc)) from exc
    out.print(f"{'registered' if new else 'updated'} model {escape(name)} (id {mid})")


@models_app.command("list")
def models_list() -> None:
    """The model register."""
    from math2.llm import list_models

    store = _store()
    with store.session() as s:
        rows = list_models(s)
        table = Table(title=f"{len(rows)} registered models")
        for col in ("id", "name", "revision", "provider", "terms", "notes"):
            table.add_column(col, overflow="fold")
        for m in rows:
            table.add_row(
                str(m.id),
                m.name,
                m.revision or "-",
                m.provider or "-",
                m.terms or "-",
                m.notes or "-",
            )
    out.print(table)
