"""`math2 informalize --library mathlib`: Lean declarations in, informal statements out (Herald)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from math2.cli._common import _store, app, err, fail, out, state
from math2.cli._executor import Address, Executor, RaySet, ray_options
from math2.cli._outcome import finish_run

if TYPE_CHECKING:
    from math2.roles.informalize import Decl, InformalizeResult
    from math2.runs import RunSummary
    from math2.store import Store


@app.command("informalize")
def informalize_cmd(
    model: Annotated[str, typer.Option(help="Writer model, registered.")],
    translator: Annotated[str, typer.Option(help="Back-translation model (a second model).")],
    nli: Annotated[str | None, typer.Option(help="NLI model (default: the translator).")] = None,
    library: Annotated[str, typer.Option(help="Library whose declarations are written.")] = (
        "mathlib"
    ),
    limit: Annotated[
        int | None,
        typer.Option(
            help="Only N: the first N of the dependency order of the closure of the library's "
            "first N declarations (only that closure is read)."
        ),
    ] = None,
    names: Annotated[
        Path | None,
        typer.Option(
            help="Only these declarations of the store's library: a file of Lean names, one a "
            "line (`#` starts a comment), written in dependency order among themselves."
        ),
    ] = None,
    from_devset: Annotated[
        bool,
        typer.Option(
            "--from-devset",
            help="Only the answers of the retrieval dev sets (benchmarks/devsets) that are "
            "declarations of the store's library.",
        ),
    ] = False,
    lean_dir: Annotated[
        Path | None, typer.Option(help="A Lean source tree instead of the store's mentions.")
    ] = None,
    tactics: Annotated[
        Path | None,
        typer.Option(help="lean_scout tactics folder: each goal state a statement (Herald)."),
    ] = None,
    augment: Annotated[
        list[str] | None,
        typer.Option(help="equivalence | abstraction | omission | translation (repeat)."),
    ] = None,
    language: Annotated[str, typer.Option(help="Language of the translation.")] = "French",
    max_tokens: Annotated[int, typer.Option(help="Longest reply of the writer.")] = 1024,
    check_max_tokens: Annotated[
        int | None, typer.Option(help="Longest reply of the back-translation and NLI calls.")
    ] = None,
    executor: Executor = "local",
    address: Address = None,
    ray_set: RaySet = None,
) -> None:
    """Write the informal statement of each declaration in dependency order; check; store."""
    import asyncio

    from math2.cli._progress import ProgressDisplay
    from math2.errors import InputError, Math2Error
    from math2.llm import EndpointDown
    from math2.roles.informalize import AUGMENTATIONS, InformalizeOptions, run_informalize

    bad = [a for a in augment or [] if a not in AUGMENTATIONS]
    if bad:
        raise fail(f"unknown augmentation {', '.join(bad)}; choose from {', '.join(AUGMENTATIONS)}")
    given = [o for o, v in (("--lean-dir", lean_dir), ("--tactics", tactics), ("--names", names),
             ("--from-devset", from_devset)) if v]  # fmt: skip
    if len(given) > 1:
        raise fail(f"give one of {', '.join(given)}, not several")
    for p in (lean_dir, tactics):
        if p is not None and not p.is_dir():
            raise fail(f"{p}: no such folder")
    store = _store(migrate=True)
    chosen = None
    if names is not None or from_devset:
        try:
            chosen = chosen_names(store, library, names)
        except InputError as exc:
            raise fail(escape(str(exc))) from exc
    options = InformalizeOptions(
        model=model,
        translator=translator,
        nli=nli,
        library=library,
        limit=limit,
        names=chosen,
        lean_dir=str(lean_dir.resolve()) if lean_dir else None,
        tactics_dir=str(tactics.resolve()) if tactics else None,
        augment=augment or [],
        language=language,
        max_tokens=max_tokens,
        check_max_tokens=check_max_tokens,
    )
    verdicts: Counter[str] = Counter()  # each written statement by the battery's verdict

    def tally(_rec: Decl, result: InformalizeResult) -> None:
        verdicts["accepted" if result.accepted else result.verdict] += 1

    ray = ray_options(executor, address, store, ray_set)
    try:
        with ProgressDisplay(err) as show:
            summary = asyncio.run(
                run_informalize(
                    state.settings, store, options, on_progress=show, on_result=tally, ray=ray
                )
            )
    except EndpointDown as exc:  # the run stopped early; its unfinished items wait for a resume
        raise fail(escape(str(exc)), code=1) from exc
    except (InputError, Math2Error) as exc:
        raise fail(str(exc)) from exc
    out.print(
        escape(summary_line(summary, verdicts, options.translator, options.nli)),
        highlight=False,
        soft_wrap=True,
    )
    out.print(escape(f"see `math2 runs show {summary.run_id}`; the texts wait for review"))
    finish_run(store, summary.run_id, "declarations")


def read_names(path: Path) -> list[tuple[int, str]]:
    """`--names FILE`: (line, name) of each Lean name, one a line; blank lines and `#` comments
    are skipped; a line of two words or an unreadable file is an InputError naming the line."""
    from math2.errors import InputError

    try:
        # utf-8-sig: a byte-order mark (a file saved by Notepad) is no part of line 1's name
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the names: {exc}") from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if len(words) > 1:
            raise InputError(path, i, f"one Lean name a line, not {len(words)} words")
        if words:
            out.append((i, words[0]))
    if not out:
        raise InputError(path, None, "no names in the file")
    return out


def chosen_names(store: Store, library: str, names: Path | None) -> list[str]:
    """The declarations `--names FILE` (every one must be an informalizable declaration of the
    library, else an InputError naming its line) or `--from-devset` (those of the library; how
    many are not is said) choose, each once, in the order given."""
    from math2.errors import InputError
    from math2.roles.informalize.select import informalizable_names

    lines = read_names(names) if names is not None else devset_answers()
    with store.session() as s:
        known = informalizable_names(s, library, [n for _, n in lines])
    if names is not None:
        unknown = [(i, n) for i, n in lines if n not in known]
        if unknown:
            i, n = unknown[0]
            more = f" ({len(unknown) - 1} more names are not either)" if len(unknown) > 1 else ""
            raise InputError(names, i, f"{n} is no declaration of {library!r} to informalize{more}")
    chosen = list(dict.fromkeys(n for _, n in lines if n in known))
    if names is None:
        left = len({n for _, n in lines}) - len(chosen)
        err.print(
            escape(f"--from-devset: {len(chosen)} dev-set answers to informalize; {left} are no "
                   f"declaration of {library!r} to informalize (fields, missing, inactive)"),
            highlight=False,
        )  # fmt: skip
        if not chosen:
            raise InputError(f"the store's {library!r}", None, "no dev-set answer is in it")
    return chosen


def devset_answers() -> list[tuple[int, str]]:
    """Every answer of the retrieval dev sets (`math2.retrieval.devsets_dir()`, every `*.yaml`),
    in the sets' order, with line 0 (the sets are read as YAML, `devsets.read_answers`); a file
    that is no dev set is a DevSetError naming it."""
    from math2.retrieval.devsets import devsets_dir, read_answers

    return [(0, a) for a in read_answers(devsets_dir())]


def summary_line(
    summary: RunSummary, verdicts: Counter[str], translator: str, nli: str | None
) -> str:
    """The end of `math2 informalize`: the statements accepted and those not, by the battery's
    verdict (`error`: a check could not decide, never accepted), and what judged them — no Lean
    runs here: the declarations are read as text."""
    rejected = {v: n for v, n in sorted(verdicts.items()) if v != "accepted"}
    why = ", ".join(f"{v} {n}" for v, n in rejected.items())
    return (
        f"run {summary.run_id}: {summary.done} written this time ({verdicts['accepted']} accepted "
        f"by the checks, {sum(rejected.values())} not{f': {why}' if why else ''}), "
        f"{summary.failed} stopped by an exception, {summary.skipped} already finished; no Lean "
        f"ran: the checks are the lints and {translator}'s back-translation compared by "
        f"{nli or translator}"
    )
