"""llama.cpp's HTTP server for `make evals-model`, run by the model's own virtualenv (`.model/venv`).

This file imports only the standard library and `xllamacpp` (a prebuilt CPU wheel of llama.cpp's server),
so it runs in that virtualenv, never the project's: `evals/local_model.py` starts it as
`.model/venv/bin/python evals/llama_server.py --model … --template … --port …`, waits for `/health`, and
stops it with SIGTERM. The settings that make a run repeatable live here: a context of 8,192 tokens, one
slot (so the prompt cache carries over from one turn of a conversation to the next), temperature 0 and a
fixed seed by default (the runner sends both in every request as well).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

N_CTX = 8192
SEED = 1234


def build_params(args: argparse.Namespace):
    import xllamacpp  # the model's virtualenv only

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = args.alias
    params.n_ctx = args.n_ctx
    params.n_parallel = 1  # one slot: the prompt cache follows the conversation
    params.use_jinja = True
    with open(args.template, encoding="utf-8") as template:
        params.chat_template = template.read()
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.sampling.temp = 0.0
    params.sampling.seed = SEED
    params.warmup = False
    return params


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--template", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", default="local")
    parser.add_argument("--n-ctx", type=int, default=N_CTX)
    parser.add_argument("--threads", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    args = parser.parse_args()

    import xllamacpp  # the model's virtualenv only

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    _server = xllamacpp.Server(build_params(args))  # serves in the background while it is referenced
    print(f"llama.cpp server on 127.0.0.1:{args.port}", flush=True)
    stop.wait()
    # Leave at once: the server's destructor waits for a request in progress, which may take minutes
    # on a busy CPU; the runner that asked to stop has no use for its answer.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
