"""`python -m math2.llm.testing.llama_serve`: llama.cpp's own HTTP server from a prebuilt wheel.

The PyPI wheel `xllamacpp` (manylinux, CPU build without AVX-512/AMX, so it runs on any x86-64
with AVX2) links llama.cpp's server (`tools/server`) into a Python extension: its `Server`
loads the model and listens on `hostnames`/`port` with the same OpenAI-compatible endpoints as
the `llama-server` binary (`/health`, `/v1/chat/completions`, `/v1/models`, JSON-schema
grammars). This module takes the subset of `llama-server`'s options that
`math2.llm.testing.llama.LlamaServer` passes, so the one class starts either program; it
serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m math2.llm.testing.llama_serve")
    p.add_argument("--model", required=True, help="the GGUF file")
    p.add_argument("--alias", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ctx-size", type=int, default=4096)
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n-predict", type=int, default=-1)
    return p


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    if args.alias:
        params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.n_predict = args.n_predict
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xllamacpp.Server(params)  # returns once the model is loaded and the port listens
    print(f"llama_serve: listening at {server.listening_address}", file=sys.stderr, flush=True)
    while not stop.wait(1.0):
        pass
    del server  # its destructor stops the server's loop and frees the model


if __name__ == "__main__":
    main()
