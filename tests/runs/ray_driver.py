"""A driver process for the SIGKILL and node-loss tests: `python -m tests.runs.ray_driver ADDRESS
DB BASE_URL REPL_LOG TEMPLATE N [NODE_FILE]` runs (or resumes) the test job on the cluster at
ADDRESS; with NODE_FILE it first writes there the id of the node it joined (its raylet). A run
another driver holds ends it with exit 2, naming the holder on stderr (as the CLI does)."""

from __future__ import annotations

import asyncio
import functools
import sys
from pathlib import Path

from math2.runs import execute
from math2.runs.lease import RunHeld
from math2.runs.ray_actors import NAMESPACE
from math2.runs.ray_exec import RayOptions
from math2.store import Store
from tests.runs import ray_job


def main() -> None:
    address, db, base_url, repl_log, template, n = sys.argv[1:7]
    if len(sys.argv) > 7:
        import ray

        ray.init(address=address, namespace=NAMESPACE, logging_level="WARNING")
        Path(sys.argv[7]).write_text(ray.get_runtime_context().get_node_id())
    store = Store(db)
    try:
        summary = run(store, address, base_url, repl_log, template, int(n))
    except RunHeld as exc:
        print(exc, file=sys.stderr)
        sys.exit(2)
    print(summary.model_dump_json())


def run(store: Store, address: str, base_url: str, repl_log: str, template: str, n: int):
    return asyncio.run(
        execute(
            store,
            ray_job.job(template),
            ray_job.items(n),
            executor="ray",
            ray=RayOptions(
                address=address,
                batch_size=2,
                items_per_node=4,
                lean=ray_job.pool_config(Path(repl_log)),
            ),
            services_factory=functools.partial(ray_job.services, base_url),
            resources=ray_job.resources(),
            params=ray_job.params(base_url, repl_log, template, n),
        )
    )


if __name__ == "__main__":
    main()
