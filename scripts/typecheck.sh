#!/usr/bin/env bash
# The type checker of scripts/test.sh: mypy over src/math2 (settings in pyproject.toml). An error
# that mypy-baseline.txt does not list fails; so does a listed one that is gone (run
# `scripts/typecheck.sh --sync` to shrink the list). The strict packages (math2.runs,
# math2.services, math2.lean, math2.retrieval) may hold no entry in the list.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
[ -x "$bin/mypy" ] || bin=$(dirname "$(command -v mypy)")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# mypy prints nothing until it is done (71 s on the shared machine, issue 46 §4): its output goes
# to the file, and math2's progress facility (standard library only) prints a line on stderr
# every 15 s on a clock — the time so far and how many lines mypy wrote — and one at the end.
py=$bin/python
[ -x "$py" ] || py=python3
{ "$bin/mypy" 2>&1 || true; } | tee "$out" \
  | PYTHONPATH=src "$py" -m math2.util.progress --stage "typecheck (mypy over src/math2)" \
    --every "${TYPECHECK_PROGRESS_EVERY:-15}" >&2
if grep -q "^mypy: error\|^Traceback" "$out"; then cat "$out" >&2; exit 2; fi
if [ "${1:-}" = "--sync" ]; then
  "$bin/mypy-baseline" sync --baseline-path mypy-baseline.txt --sort-baseline <"$out"
  exit 0
fi
# a strict package's error is never forgiven by the list
strict='^src/math2/(runs|services|lean|retrieval)/'
if grep -E "$strict" mypy-baseline.txt >&2; then
  echo "typecheck: mypy-baseline.txt lists errors of a strict package (above): fix them" >&2
  exit 1
fi
"$bin/mypy-baseline" filter --baseline-path mypy-baseline.txt --sort-baseline --no-colors <"$out"
