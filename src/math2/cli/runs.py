"""`math2 runs …`: list runs, show one, resume one; `math2 models …`: the model register."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from math2.cli._common import _store, app, err, fail, out, state

runs_app = typer.Typer(help="Long jobs: list, show and resume runs.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
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
    out.print(f"run {d.id}: {d.job} on {escape(d.key)} · status {d.status}", highlight=False)
    out.print(f"spec {d.spec_hash}: " + escape(json.dumps(d.spec, ensure_ascii=False)))
    out.print("params: " + escape(json.dumps(d.params, ensure_ascii=False, default=str)))
    nodes = (d.params or {}).get("nodes") or []
    executor = (d.params or {}).get("executor", "local")
    out.print(
        f"executor: {executor}" + (f" on {len(nodes)} node(s): {', '.join(nodes)}" if nodes else "")
    )
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


@runs_app.command("resume")
def runs_resume(run_id: Annotated[int, typer.Argument(help="The run's id.")]) -> None:
    """Start a run again where it stopped: done items skipped, finished calls from the caches."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.runs import CannotResume, resumer
    from math2.store import Run

    store = _store()
    with store.session() as s:
        run = s.get(Run, run_id)
        if run is None:
            raise fail(f"no run {run_id} in the store (see `math2 runs list`)")
        s.expunge(run)
    try:
        resume = resumer(run.job)
    except CannotResume as exc:
        raise fail(str(exc)) from exc
    with ProgressDisplay(err) as show:
        summary = asyncio.run(resume(run, state.settings, store, show))
    out.print(
        f"run {summary.run_id}: {summary.done} done, {summary.failed} failed, "
        f"{summary.skipped} already finished"
    )
    from math2.cli._outcome import finish_run

    finish_run(store, summary.run_id)


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
