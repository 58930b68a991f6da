"""A driver process for the SIGKILL test: `python -m tests.runs.ray_driver ADDRESS DB BASE_URL
REPL_LOG TEMPLATE N` runs (or resumes) the test job on the cluster at ADDRESS."""

from __future__ import annotations

import asyncio
import functools
import sys
from pathlib import Path

from math2.runs import Resource, execute
from math2.runs.ray_exec import RayOptions
from math2.store import Store
from tests.runs import ray_job


def main() -> None:
    address, db, base_url, repl_log, template, n = sys.argv[1:7]
    store = Store(db)
    summary = asyncio.run(
        execute(
            store,
            ray_job.job(template),
            ray_job.items(int(n)),
            executor="ray",
            ray=RayOptions(address=address, batch_size=2, lean=ray_job.pool_config(Path(repl_log))),
            services_factory=functools.partial(ray_job.services, base_url),
            resources={"model": Resource("model", 4), "lean": Resource("lean", 2)},
        )
    )
    print(summary.model_dump_json())


if __name__ == "__main__":
    main()
