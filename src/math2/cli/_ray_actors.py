"""`math2 runs actors list|stop`: math2's actors on a Ray cluster (docs/scale.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from math2.cli._common import fail, out, state
from math2.cli._executor import Address

actors_app = typer.Typer(
    help="math2's actors on a Ray cluster: each run's actors end with it; these are for what "
    "is left over (a cluster that outlived an older math2, a driver Ray has not noticed dead).",
    no_args_is_help=True,
)


def _cluster(address: str | None) -> Any:
    """The `ray` module joined to the cluster at `address` (else `[ray] address`, else `auto`)."""
    from math2.runs.ray_exec import RayOptions, RayUnavailable, connect

    where = address or state.settings.ray.address or "auto"
    try:
        return connect(RayOptions(address=where, init_kwargs={"logging_level": "WARNING"}))
    except RayUnavailable as exc:
        raise fail(escape(str(exc))) from exc
    except ConnectionError as exc:
        raise fail(escape(f"no Ray cluster at {where}: {exc}")) from exc


@actors_app.command("list")
def actors_list(address: Address = None) -> None:
    """math2's named actors on the cluster; `left over` marks those no live run owns."""
    from math2.runs.ray_hub import left_over, named_actors

    names = named_actors(_cluster(address))
    spare = set(left_over(names))
    for n in names:
        out.print(escape(n) + ("  left over" if n in spare else ""), highlight=False)
    out.print(f"{len(names)} actors, {len(spare)} left over", highlight=False)


@actors_app.command("stop")
def actors_stop(
    address: Address = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every math2 actor, live runs' hubs too (those runs can no longer write: "
            "stop their drivers first).",
        ),
    ] = False,
) -> None:
    """Stop math2's left-over actors (with --all, every one)."""
    from math2.runs.ray_hub import stop_actors

    stopped = stop_actors(_cluster(address), every=every)
    for n in stopped:
        out.print(f"stopped {escape(n)}", highlight=False)
    out.print(f"{len(stopped)} actors stopped", highlight=False)
