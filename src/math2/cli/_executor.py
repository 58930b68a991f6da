"""The `--executor local|ray [--address …] [--ray-option KEY=VALUE …]` options every run command
shares."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

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
        "default: \\[ray] address in math2.toml, else a cluster started for this run.",
    ),
]
RaySet = Annotated[
    list[str] | None,
    typer.Option(
        "--ray-option",
        help="KEY=VALUE: one of the \\[ray] settings for this run (batch_size, items_per_node, "
        "lean_actors_per_node, workers_per_node, task_cpus, task_max_retries, actor_max_restarts, "
        "lean_actor_cpus, lean_actor_memory, runtime_env as JSON); repeatable.",
    ),
]


def _parse_sets(sets: list[str]) -> dict[str, Any]:
    from math2.config import RaySettings

    out: dict[str, Any] = {}
    for item in sets:
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in RaySettings.model_fields or key == "address":
            known = ", ".join(k for k in RaySettings.model_fields if k != "address")
            raise typer.BadParameter(
                f"{item!r}: give KEY=VALUE with KEY one of {known} (the cluster is --address)",
                param_hint="--ray-option",
            )
        value = value.strip()
        if key == "runtime_env" and value.lower() not in ("", "none"):
            try:
                out[key] = json.loads(value)
            except ValueError as exc:
                raise typer.BadParameter(
                    f"{item!r}: runtime_env is a JSON object ({exc})", param_hint="--ray-option"
                ) from None
            continue
        out[key] = None if value.lower() in ("", "none") else value
    return out


def ray_options(
    executor: str,
    address: str | None,
    store: Store,
    sets: list[str] | None = None,
    recorded: dict[str, Any] | None = None,
) -> RayOptions | None:
    """None for the local executor; RayOptions for Ray, after checking Ray and the store: the
    settings' `[ray]`, under the options a run `recorded` (a resume), under `--ray-option`s
    and `--address`. Raises `typer.BadParameter` naming the option when one is wrong."""
    if executor == "local":
        if address:
            raise typer.BadParameter("--address is only for --executor ray", param_hint="--address")
        if sets:
            raise typer.BadParameter(
                "--ray-option is only for --executor ray", param_hint="--ray-option"
            )
        return None
    if executor != "ray":
        raise typer.BadParameter(
            f"{executor!r} is not an executor: local or ray", param_hint="--executor"
        )
    from math2.cli._common import state
    from math2.runs.ray_exec import RayUnavailable, check_store, require_ray

    try:
        require_ray()
        check_store(store)
    except RayUnavailable as exc:
        raise typer.BadParameter(str(exc), param_hint="--executor") from exc
    return merged_options(state.settings.ray.model_dump(), recorded, sets, address)


def merged_options(
    configured: dict[str, Any],
    recorded: dict[str, Any] | None,
    sets: list[str] | None,
    address: str | None,
) -> RayOptions:
    """The Ray options of a run: `configured` (`[ray]` in math2.toml), under the ones the run
    `recorded` (a resume), under `--ray-option`s and `--address`."""
    from pydantic import ValidationError

    from math2.config import RaySettings
    from math2.runs.ray_exec import RayOptions

    given = _parse_sets(sets or [])
    known = {k: v for k, v in (recorded or {}).items() if k in RaySettings.model_fields}
    values = {**configured, **known, **given}
    if address:
        values["address"] = address
    try:
        return RayOptions.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        hint = "--ray-option" if err["loc"] and err["loc"][0] in given else "[ray] in math2.toml"
        raise typer.BadParameter(f"{where}: {err['msg']}", param_hint=hint) from exc
