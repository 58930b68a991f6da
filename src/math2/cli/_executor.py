"""The `--executor local|ray [--address …]` options every run command shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from math2.runs.ray_exec import RayOptions
    from math2.store import Store

# Help text is rich markup: a literal "[" is written "\[" (else `math2[ray]` prints as `math2`).
Executor = Annotated[
    str,
    typer.Option(
        "--executor",
        help="local (this process, the default) or ray (a Ray cluster; needs a PostgreSQL "
        "store and pip install 'math2\\[ray]').",
    ),
]
Address = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="The Ray cluster: ray://HOST:10001, or auto (the one this machine belongs to); "
        "default: a cluster started for this run.",
    ),
]


def ray_options(executor: str, address: str | None, store: Store) -> RayOptions | None:
    """None for the local executor; RayOptions for Ray, after checking Ray and the store.
    Raises `typer.BadParameter` naming the option when either is wrong."""
    if executor == "local":
        if address:
            raise typer.BadParameter("--address is only for --executor ray", param_hint="--address")
        return None
    if executor != "ray":
        raise typer.BadParameter(
            f"{executor!r} is not an executor: local or ray", param_hint="--executor"
        )
    from math2.runs.ray_exec import RayOptions, RayUnavailable, check_store, require_ray

    try:
        require_ray()
        check_store(store)
    except RayUnavailable as exc:
        raise typer.BadParameter(str(exc), param_hint="--executor") from exc
    return RayOptions(address=address)
