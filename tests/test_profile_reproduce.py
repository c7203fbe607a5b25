"""benchmarks/profile_reproduce.py's report: samples attributed to the right kernel (a kernel runs under a
worker process, the model server under a kernel) and the kernels' main threads split by what they did."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
spec = importlib.util.spec_from_file_location("profile_reproduce", BENCH / "profile_reproduce.py")
prof = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prof)

PARENT = 'process 10:"python lcrag reproduce";process 11:"python -m lcrag.reproduction.worker out"'
K1 = PARENT + ';process 20:"python -m ipykernel_launcher -f a.json"'
K2 = PARENT + ';process 30:"python -m ipykernel_launcher -f b.json"'
MAIN = "_run_module_as_main (runpy.py:198);<module> (ipykernel_launcher.py:18)"
CELL = MAIN + ";InteractiveShell.run_cell (IPython/core/interactiveshell.py:3248);<module> (123.py:1)"
RAW = "\n".join([
    f"{K1};{CELL};_find_and_load (<frozen importlib._bootstrap>:1176);<module> (seaborn/__init__.py:2) 30",
    f"{K1};{CELL};save_figure (lcrag/outputs/save.py:46);FigureCanvasBase.print_figure (matplotlib/backend_bases.py:2249) 20",
    f"{K1};{CELL};run (lcrag/experiment/engine.py:120) 10",
    f"{K1};Thread._bootstrap (threading.py:1002);OutStream._watch_pipe_fd (ipykernel/iostream.py:478) 500",
    f'{K1};process 40:"python -m lcrag.llm.server_child";{MAIN};LlamaContext.decode (llama_cpp/_internals.py:329) 400',
    f"{K2};{CELL};run (lcrag/experiment/engine.py:120) 50",
    f"{PARENT};_run_module_as_main (runpy.py:198);main (lcrag/reproduce_worker.py:57) 5",
])


def test_samples_go_to_their_kernel_and_main_threads_are_split_by_activity(tmp_path):
    raw = tmp_path / "pyspy.txt"
    raw.write_text(RAW + "\n")
    report = prof.aggregate(raw, ["01_a.ipynb", "02_b.ipynb"], rate=10, top=3)
    def section(title: str) -> list[str]:
        return [ln.strip() for ln in report.split(title + "\n")[1].split("\n\n")[0].splitlines()]

    # 01: its cell work, its pipe watcher and its model server; the worker's own sample is not a notebook's
    assert section("per notebook (kernel and its children):") == [
        "96.0 s  01_a.ipynb", "5.0 s  02_b.ipynb", "0.5 s  lcrag reproduce and its workers (papermill)"]
    assert section("kernels' main threads:") == ["6.0 s  cell work", "3.0 s  import", "2.0 s  saving figures"]
