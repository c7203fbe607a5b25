"""An LC sweep on the local llama.cpp server: prefix-aware call order against the same calls shuffled.

The sweep: one haystack of ``--chars`` characters (default 6,000: about 2,100 SmolLM2 tokens with the prompt)
built from the synthetic fact pool, a needle placed at each of ``--depths`` (default 0.1, 0.5, 0.9; NoLiMa's depth
rule, :func:`lcrag.contexts.haystack.insert_at_depth`), and ``--questions`` questions (default 3) asked over each placement
with the EBG prompt (haystack first, question last) — 9 calls. Both runs go through :func:`lcrag.runner.run_tasks`
with the SmolLM2 profile (``max_tokens`` 16, one call at a time, no retries, response cache off), on one server
(``lcrag.llm.server.LocalServer``) started for the benchmark:

* **baseline** — the tasks in a seeded random order, ``prefix_order=False`` (sent as listed);
* **lcrag** — the same task list, ``prefix_order=True`` (:mod:`lcrag.llm.prefix`).

Before each run one short unrelated prompt clears the server's slot, so neither run starts from the other's last
prompt. Reported: wall seconds of each run, the ratio baseline / lcrag (goal >= 1.5), whether the replies are
identical task by task, and the prompt tokens the server evaluated: the sum of the calls' ``prompt_tokens``
(usage) minus the tokens the server took from its slot, which llama-cpp-python's server logs per call as
``Llama.generate: N prefix-match hit`` (what llama.cpp reused of the previous prompt). Rows go to
``benchmarks/results/prefix_llama.csv``.

    nice -n 10 .venv/bin/python benchmarks/bench_prefix_llama.py [--chars 6000] [--questions 3] [--repeat 1]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import write  # noqa: E402

QUESTIONS = ["Which city does Lorenzo Vittori live in?", "Where does Lorenzo Vittori live?",
             "In which city is Lorenzo Vittori's home?", "What is the home city of Lorenzo Vittori?",
             "Name the city where Lorenzo Vittori lives.", "Lorenzo Vittori lives in which town?"]
NEEDLE = "Lorenzo Vittori lives in the city of Castelbruno."


def build_tasks(chars: int, depths: list[float], n_questions: int):
    from lcrag.studies.synthetic.data import default_pool
    from lcrag.contexts.haystack import SourceLine, fill_to_length, insert_at_depth, render_numbered
    from lcrag.runner import Task
    from lcrag.types import Item

    rng = random.Random(0)
    facts = fill_to_length(default_pool(2000, 0), chars, rng)
    lines = [SourceLine(f) for f in facts]
    tasks = []
    for d in depths:
        placed, _ = insert_at_depth(lines, SourceLine(NEEDLE, role="needle"), d)
        ctx = render_numbered(placed, condition=f"depth-{d}")
        for qi, q in enumerate(QUESTIONS[:n_questions]):
            tasks.append(Task(item=Item(id=f"q{qi}", question=q, answers=("Castelbruno",)), context=ctx, prompt="ebg",
                              condition=f"depth-{d}"))
    return tasks


def reused_tokens(log: str) -> int:
    return sum(int(m) for m in re.findall(r"Llama\.generate: (\d+) prefix-match hit", log))


def one_run(tasks, reader, prefix_order: bool, tmp: Path, log_path: Path, tag: str) -> dict:
    from lcrag.llm.cache import ResponseCache
    from lcrag.runner import run_tasks

    reader.client.chat([{"role": "user", "content": f"Say OK ({tag}, {time.time()})."}])  # clear the slot
    start = log_path.stat().st_size if log_path.exists() else 0
    t0 = time.perf_counter()
    rows = run_tasks(tasks, reader, run=f"bench-{tag}", results_path=tmp / f"{tag}.jsonl", scorer=lambda t, r: {},
                     cache=ResponseCache(tmp / f"{tag}.sqlite", mode="off"), progress=False, log=lambda s: None,
                     prefix_order=prefix_order)
    wall = time.perf_counter() - t0
    time.sleep(0.5)  # the server's log lines of the last call
    log = log_path.read_bytes()[start:].decode("utf-8", "replace")
    prompt = sum(r.prompt_tokens for r in rows)
    return {"wall_s": wall, "rows": rows, "prompt_tokens": prompt, "evaluated": prompt - reused_tokens(log),
            "errors": sum(r.outcome != "ok" for r in rows)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chars", type=int, default=6000)
    ap.add_argument("--depths", type=float, nargs="+", default=[0.1, 0.5, 0.9])
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--max-tokens", dest="max_tokens", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lcrag-first", dest="lcrag_first", action="store_true",
                    help="run the prefix-ordered sweep before the shuffled one (to see the effect of run order)")
    a = ap.parse_args()

    from lcrag.llm.readers import make_reader
    from lcrag.llm.server import LocalServer

    tasks = build_tasks(a.chars, a.depths, a.questions)
    shuffled = list(tasks)
    random.Random(a.seed).shuffle(shuffled)
    rows_out = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        log_path = tmp / "server.log"
        srv = LocalServer(port=0, n_ctx=4096, log_path=log_path).start()
        try:
            reader = make_reader("smollm2-local", base_url=srv.base_url, max_tokens=a.max_tokens, concurrency=1,
                                 timeout_s=3600, max_retries=0)  # a retried call would be timed twice
            best = {"baseline": None, "lcrag": None}
            for rep in range(a.repeat):
                runs = (("baseline", False), ("lcrag", True))
                for name, order in (runs[::-1] if a.lcrag_first else runs):
                    r = one_run(shuffled, reader, order, tmp, log_path, f"{name}{rep}")
                    print(f"{name} (rep {rep}): {r['wall_s']:.1f} s, {r['evaluated']:,} of {r['prompt_tokens']:,} prompt "
                          f"tokens evaluated, {r['errors']} errors", flush=True)
                    if best[name] is None or r["wall_s"] < best[name]["wall_s"]:
                        best[name] = r
        finally:
            srv.stop()
    b, o = best["baseline"], best["lcrag"]
    same = sum(x.answer == y.answer and x.meta.get("raw") == y.meta.get("raw") and x.outcome == y.outcome
               for x, y in zip(b["rows"], o["rows"]))
    ratio = b["wall_s"] / o["wall_s"]
    print(f"prefix-aware order {o['wall_s']:.1f} s vs shuffled {b['wall_s']:.1f} s: {ratio:.2f}x; replies identical "
          f"{same}/{len(tasks)}; evaluated prompt tokens {o['evaluated']:,} vs {b['evaluated']:,}")
    for name, r in (("shuffled (task order, prefix_order=False)", b), ("lcrag prefix order", o)):
        rows_out.append({"variant": name, "calls": len(tasks), "haystack_chars": a.chars, "depths": len(a.depths),
                         "questions": a.questions, "wall_s": round(r["wall_s"], 2), "prompt_tokens": r["prompt_tokens"],
                         "evaluated_prompt_tokens": r["evaluated"], "errors": r["errors"],
                         "speedup_vs_shuffled": round(b["wall_s"] / r["wall_s"], 3), "replies_identical": f"{same}/{len(tasks)}",
                         "evaluated_ratio_vs_shuffled": round(b["evaluated"] / r["evaluated"], 3),
                         "run_order": "lcrag first" if a.lcrag_first else "shuffled first"})
    write("prefix_llama", rows_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
