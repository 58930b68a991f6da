#!/usr/bin/env bash
# A newcomer's first steps, timed (issue 46, docs/benchmarks.md): a fresh clone of this checkout
# in OUT (default: a new temporary folder), a new HOME holding only this user's pip
# configuration, an empty PIP_CACHE_DIR, no MATH2_* variables and no PYTHONPATH; then
# `scripts/setup.sh`, `scripts/setup.sh --dev`, `scripts/setup-llama.sh` and `math2 build`, each
# under /usr/bin/time (OUT/times.log: wall, user, sys, exit), the load average every 30 s
# (OUT/load.log) and each step's output in OUT/<step>.out.
set -u
src="$(cd "$(dirname "$0")/.." && pwd)"
R=${1:-$(mktemp -d)}
mkdir -p "$R/home/.config" "$R/pipcache"
cp -r ~/.config/pip "$R/home/.config/" 2>/dev/null || true
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^MATH2_' || true)
unset PYTHONPATH VIRTUAL_ENV
export HOME=$R/home PIP_CACHE_DIR=$R/pipcache
git clone -q "$src" "$R/math2"
cd "$R/math2"
(while true; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$R/load.log"; sleep 30; done) &
sampler=$!
trap 'kill $sampler' EXIT
for step in "bash scripts/setup.sh" "bash scripts/setup.sh --dev" "bash scripts/setup-llama.sh" \
  ".venv/bin/math2 build"; do
  echo "=== $step  start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$R/times.log"
  # shellcheck disable=SC2086  # the step is words
  /usr/bin/time -f "=== $step: wall %e s, user %U s, sys %S s, rc %x" -a -o "$R/times.log" \
    $step >"$R/$(echo "$step" | tr ' /' '__').out" 2>&1
  echo "=== end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$R/times.log"
done
echo "first_setup: $R/times.log"
