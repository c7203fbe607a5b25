"""A notebook kernel's start: forked from lcrag's kernel fork server against a new process.

``lcrag reproduce`` forks every notebook's kernel from one server that imported the kernels' libraries
once (:mod:`lcrag.kernelfork`). This starts ``--kernels`` real kernels each way through the kernel
manager ``lcrag reproduce`` uses (:func:`lcrag.reproduce.kernel_manager_logging_to`), alternating the two
ways, and times each from ``start_kernel`` to (a) the kernel answering ``kernel_info`` (with the kernel
process's own CPU time until then: the rest of that time it waits) and (b) a first cell
``import seaborn, pandas, matplotlib.pyplot`` finished — what a notebook's first cell imports. A third way,
forked with jupyter_client's own ``wait_for_ready`` (``forked, stock wait``), measures what
:class:`lcrag.kernelclient.ReadyKernelClient` saves: that wait ends with 0.2 s of IOPub silence. Reported:
the median of each, and the ratio new process / each. The server is started once, before the timing
(its own start-up is paid once per reproduction). Rows go to ``benchmarks/results/kernel_start.csv``.

    .venv/bin/python benchmarks/bench_kernel_start.py [--kernels 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write  # noqa: E402

FIRST_CELL = "import seaborn, pandas, matplotlib.pyplot"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _one(log: Path, stock_wait: bool = False) -> tuple[float, float, float]:
    from jupyter_client.asynchronous import AsyncKernelClient

    from lcrag.reproduce import kernel_manager_logging_to

    km = kernel_manager_logging_to(log)(kernel_name="python3")
    t0 = time.perf_counter()
    await km.start_kernel(cwd=str(log.parent))
    kc = km.client()
    kc.start_channels()
    try:
        if stock_wait:  # jupyter_client's own wait (0.2 s of IOPub silence at its end)
            await AsyncKernelClient.wait_for_ready(kc, timeout=120)
        else:  # lcrag.kernelclient.ReadyKernelClient, what the reproduction's kernels get
            await kc.wait_for_ready(timeout=120)
        ready = time.perf_counter() - t0
        cpu = _cpu_seconds(km.provisioner.process.pid)  # the kernel's own work until ready; the rest is waiting
        reply = await kc.execute_interactive(FIRST_CELL, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        return ready, time.perf_counter() - t0, cpu
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=5, help="kernels started each way (alternating)")
    a = ap.parse_args(argv)
    from lcrag import kernelfork

    os.environ.pop(kernelfork.ENV, None)
    times: dict[str, list[tuple[float, float, float]]] = {"new process": [], "forked": [], "forked, stock wait": []}
    with tempfile.TemporaryDirectory(prefix="lcrag-bench-kernel-") as tmp:
        with kernelfork.serving(Path(tmp) / "server.log") as srv:
            if srv is None or not srv.ready():
                print("no kernel fork server here (LCRAG_KERNEL_FORK=0, or no fork): nothing to compare")
                return 1
            for i in range(a.kernels):
                for way in times:
                    if way.startswith("forked"):
                        os.environ[kernelfork.ENV] = srv.path
                    else:
                        os.environ.pop(kernelfork.ENV, None)
                    log = Path(tmp) / f"{way.replace(' ', '_').replace(',', '')}-{i}.log"
                    times[way].append(asyncio.run(_one(log, stock_wait=way.endswith("stock wait"))))
            os.environ.pop(kernelfork.ENV, None)
    med = {w: tuple(statistics.median(x[i] for x in t) for i in range(3)) for w, t in times.items()}
    rows = []
    for way, (ready, cell, cpu) in med.items():
        rows.append({"benchmark": "kernel_start", "variant": way, "kernels": a.kernels,
                     "ready_s": round(ready, 3), "kernel_cpu_to_ready_s": round(cpu, 3), "first_cell_done_s": round(cell, 3),
                     "ratio_first_cell": round(med["new process"][1] / cell, 2),
                     "loadavg_1m": round(os.getloadavg()[0], 2)})
        print(f"{way:>18}: kernel_info ready {ready:.2f} s (the kernel's CPU {cpu:.2f} s), first cell ({FIRST_CELL}) done {cell:.2f} s "
              f"(median of {a.kernels})")
    print(f"forked kernels: {rows[0]['first_cell_done_s'] / rows[1]['first_cell_done_s']:.2f}x faster to a first cell "
          "with the notebooks' imports")
    print(f"ready without jupyter_client's closing IOPub wait: {rows[2]['ready_s'] - rows[1]['ready_s']:.2f} s sooner "
          "per forked kernel")
    print(f"written to {write('kernel_start', rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
