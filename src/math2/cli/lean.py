"""`math2 lean …`: check Lean code, set Lean up."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, err, fail, out, state
from math2.errors import InputError

if TYPE_CHECKING:
    from math2.lean import CheckResult
    from math2.lean.identity import LeanIdentity

lean_app = typer.Typer(
    help="Lean verification: check files and statements, set Lean up.", no_args_is_help=True
)
app.add_typer(lean_app, name="lean")


def _mathlib_pin() -> tuple[str, str]:
    """(toolchain, Mathlib commit): from the settings, else the manifest's Mathlib pin."""
    from math2.services import PinUnknown, resolve_pin

    try:
        pin = resolve_pin(state.settings)
    except PinUnknown as exc:
        raise fail(escape(str(exc))) from exc
    return pin.toolchain, pin.mathlib_commit


@lean_app.command("check")
def lean_check(
    file: Annotated[Path, typer.Argument(help="A .lean file, or .jsonl with one item a line.")],
    mode: Annotated[
        str,
        typer.Option(
            help="statement (one theorem, proof `sorry`) or proof (a complete proof); "
            "items of a .jsonl may choose between these two"
        ),
    ] = "statement",
    relaxed: Annotated[
        bool,
        typer.Option(
            "--relaxed-unsafe",
            help="Relax the one-theorem and sorry rules for whole files (code that runs while "
            "elaborating is still refused). Never set by the data.",
        ),
    ] = False,
    name: Annotated[
        str | None,
        typer.Option(
            help="The theorem name a .lean file must declare (items of a .jsonl name their own)."
        ),
    ] = None,
    context: Annotated[
        str,
        typer.Option(
            help="Who wrote the context before each target: generated (a model's output: only "
            "the target, open and variables of types) or benchmark (people: definitions, "
            "instances, helper lemmas allowed; meaning-changers flagged)"
        ),
    ] = "generated",
    trust_compiler: Annotated[
        bool,
        typer.Option(
            "--trust-compiler",
            help="Accept proofs that trust compiled code (native_decide, bv_decide: "
            "Lean.ofReduceBool). Never set by the data.",
        ),
    ] = False,
    backend: Annotated[str | None, typer.Option(help="repl | kimina | lake")] = None,
    cache: Annotated[bool, typer.Option(help="Use the result cache in the store.")] = True,
    concurrency: Annotated[int, typer.Option(help="Checks in flight at once.")] = 8,
) -> None:
    """Check Lean code; print a verdict per item; exit 1 when any item fails."""
    import asyncio

    from math2.lean import CheckResult, LeanNotConfigured, Mode, Status
    from math2.lean.items import read_items
    from math2.lean.trust import ContextTrust
    from math2.services import make_checker

    if mode not in ("statement", "proof"):
        raise fail(f"--mode must be statement or proof, not {mode!r} (see --relaxed-unsafe)")
    if context not in ("generated", "benchmark"):
        raise fail(f"--context must be generated or benchmark, not {context!r}")
    try:
        read = read_items(file, Mode(mode), relaxed=relaxed, name=name, trust=ContextTrust(context))
    except (InputError, ValueError) as exc:
        raise fail(str(exc)) from exc
    items = read.items
    err.print(
        escape(
            f"{len(items)} items from {file}: "
            + ", ".join(f"field {f!r} {n}" for f, n in sorted(read.fields.items()))
        ),
        highlight=False,
    )
    if relaxed:
        err.print(
            "[yellow]warning:[/] --relaxed-unsafe: any number of declarations and `sorry` are "
            "accepted; code that runs while elaborating is still refused"
        )
    from math2.store import Store

    # The store gives the library's tables whatever the cache flag says (a verdict must not
    # depend on caching); `--no-cache` only leaves the result cache out.
    store = None
    if Store(state.settings.db_url).exists():
        store = _store(migrate=True)
    else:  # only init and build create a store
        err.print(
            "note: no store here, so verdicts are not cached and the library's tables hold only "
            "Lean core's installed sources, if any (`math2 init` and `math2 build` make them)"
        )
    try:
        # The verdicts and the cache key name the Lean the backend reports, not the manifest's pin.
        checker = make_checker(
            state.settings, store, backend, allow_compiled=trust_compiler, use_cache=cache
        )
    except LeanNotConfigured as exc:
        raise fail(str(exc)) from exc

    async def go() -> list[CheckResult]:
        results = []
        for item_id, why in read.refused.items():  # refused as read: the others are checked
            r = CheckResult(id=item_id, status=Status.REJECTED, passed=False, reason=why)
            out.print(f"[red]FAIL[/] {r.id:<30} {r.status.value:<12} " + escape(why))
            results.append(r)
        try:
            async for r in checker.check_many(items, concurrency=concurrency):
                mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
                out.print(
                    f"{mark} {r.id:<30} {r.status.value:<12} "
                    + escape(r.reason.splitlines()[0] if r.reason else "")
                )
                for f in r.flags:
                    out.print(f"  [yellow]flag[/] {f.rule} ({f.where()}): {escape(f.detail)}")
                results.append(r)
        finally:
            await checker.backend.close()
        return results

    results = asyncio.run(go())
    out.print(escape(check_summary(results, checker.identity)), highlight=False, soft_wrap=True)
    if any(not r.passed for r in results):
        raise typer.Exit(1)


_WHY = {"rejected": "refused before Lean"}  # hygiene's refusals, by what they mean


def check_summary(results: list[CheckResult], identity: LeanIdentity | None) -> str:
    """The last line of `math2 lean check`: passed and failed, the failures by status (a
    refusal, a timeout or a crash is a failure like a Lean error), and the Lean that produced
    the verdicts as it reported itself (a test double says so), or that none ran."""
    failed = Counter(_WHY.get(r.status.value, r.status.value) for r in results if not r.passed)
    n_failed = sum(failed.values())
    why = ", ".join(f"{k} {v}" for k, v in sorted(failed.items()))
    reached = [r for r in results if r.compiled_by]
    if identity is not None and reached:
        lean = f"checked by {identity.label()}"
    elif reached:
        lean = "checked by " + "; ".join(sorted({r.compiled_by for r in reached}))
    else:
        lean = "nothing reached Lean (hygiene refused every item)"
    return (
        f"{len(results)} checked: {len(results) - n_failed} passed, {n_failed} failed"
        + (f" ({why})" if why else "")
        + f" — {lean}"
    )


@lean_app.command("setup")
def lean_setup(
    project_dir: Annotated[
        Path | None, typer.Option(help="Where the Lake project goes (default ~/.math2/lean/check).")
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Only say what is missing.")] = False,
) -> None:
    """Install the toolchain, Mathlib (with `lake exe cache get`) and the REPL, where possible."""
    from math2.lean import install

    toolchain, commit = _mathlib_pin()
    project = (
        project_dir
        or state.settings.lean.project_dir
        or (Path.home() / ".math2" / "lean" / "check")
    )
    steps = install.plan(Path(project), toolchain, commit)
    for st in steps:
        out.print(f"{'ok' if st.done else 'missing':<8} {st.name}: {st.detail}", highlight=False)
    if dry_run or all(st.done for st in steps):
        missing = [st.name for st in steps if not st.done]
        if missing:
            out.print("missing: " + ", ".join(missing) + " (run without --dry-run to install)")
        return
    try:
        install.run(steps, Path(project), toolchain, commit, echo=out.print)
    except install.SetupFailed as exc:
        raise fail(str(exc)) from exc
    out.print(
        f'Lean is set up. Put this in math2.toml:\n[lean]\nproject_dir = "{project}"\n'
        f'toolchain = "{toolchain}"\nmathlib_commit = "{commit}"'
    )
