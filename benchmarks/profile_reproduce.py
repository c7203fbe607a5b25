"""Sampling profile of a whole ``lcrag reproduce``: every notebook kernel, per notebook and per function.

Runs ``py-spy record --subprocesses`` (extra ``profile``: ``pip install -e '.[profile]'``; needs
ptrace, i.e. root or ``kernel.yama.ptrace_scope=0``) over ``lcrag reproduce`` into a temporary
output and results directory, then prints

* per notebook: sampled seconds in its kernel and its children (e.g. the local model server);
* the kernels' main threads (not the model server, not background threads) by what they were doing: importing
  modules, saving figures (``print_figure``), other cell work, the kernel's own start and idle loop;
* the functions with the most own time (where the CPU goes), over all processes;
* the lcrag functions with the most cumulative time (which package call to look at).

Seconds are samples / rate: they count every sampled thread (a kernel's background threads
included), so read shares, not wall time. The cache directory is ``LCRAG_CACHE_DIR`` as set
(point it at a copy of a warm embedding store to profile lcrag's own work).

    .venv/bin/python benchmarks/profile_reproduce.py [--params P] [--only 01 19] [--rate 50] [--top 30]
        [--without-local-model] [--raw FILE]
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent


KERNEL_MARK = "ipykernel_launcher"  # in the command line of a notebook kernel started as a new process


def kernel_frame(procs: list[str]) -> str | None:
    """The process frame of the kernel a sample ran in (or under, for a kernel's child such as the model
    server), ``None`` outside any kernel. ``procs`` runs from the profiled root to the sampled process."""
    for f in procs:
        if KERNEL_MARK in f:
            return f
    return None


def main_thread_kind(calls: list[str]) -> str | None:
    """What a kernel's main-thread sample was doing (``None`` for other threads): ``import`` (a module being
    imported, in a cell or at start-up), ``saving figures`` (matplotlib's ``print_figure``), ``cell work``,
    or ``kernel start-up and idle loop``."""
    if not calls or "_run_module_as_main" not in calls[0]:
        return None
    stack = ";".join(calls)
    if "_find_and_load" in stack:
        return "import"
    if "print_figure" in stack:
        return "saving figures"
    return "cell work" if "run_cell" in stack else "kernel start-up and idle loop"


def aggregate(raw: Path, notebooks: list[str], rate: int, top: int) -> str:
    """The report of a py-spy ``--format raw`` file (one ``stack count`` line per distinct stack). ``notebooks``
    are the notebooks in the order their kernels started."""
    per_proc: collections.Counter = collections.Counter()
    kinds: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    cum: collections.Counter = collections.Counter()
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        count = int(n)
        frames = stack.split(";")
        procs = [f for f in frames if f.startswith("process ")]
        kernel = kernel_frame(procs)  # the kernel, or the kernel a child runs under
        pid = int(re.match(r"process (\d+)", kernel or (procs[0] if procs else "process 0")).group(1))
        per_proc[(kernel is not None, pid)] += count
        calls = [f for f in frames if not f.startswith("process ")]
        if kernel is not None and procs[-1] == kernel and (kind := main_thread_kind(calls)):
            kinds[kind] += count
        if calls:
            own[calls[-1]] += count
        for f in set(calls):
            cum[f] += count
    kernels = sorted(pid for is_kernel, pid in per_proc if is_kernel)  # kernels start in hand-out order
    names = dict(zip(kernels, notebooks))
    out = [f"sampled {sum(per_proc.values()) / rate:.1f} s in {len(per_proc)} processes", "", "per notebook (kernel and its children):"]
    for (is_kernel, pid), n in sorted(per_proc.items(), key=lambda kv: -kv[1]):
        out.append(f"  {n / rate:7.1f} s  {names.get(pid, '?') if is_kernel else 'lcrag reproduce and its workers (papermill)'}")
    out += ["", "kernels' main threads:"]
    out += [f"  {n / rate:7.1f} s  {k}" for k, n in kinds.most_common()]
    out += ["", f"top {top} functions by own time:"]
    out += [f"  {n / rate:7.1f} s  {f[:150]}" for f, n in own.most_common(top)]
    out += ["", f"top {top} lcrag functions by cumulative time:"]
    out += [f"  {n / rate:7.1f} s  {f[:150]}" for f, n in [x for x in cum.most_common() if "lcrag/" in x[0]][:top]]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params/offline.yaml")
    ap.add_argument("--only", nargs="+", metavar="NN")
    ap.add_argument("--rate", type=int, default=50, help="samples per second")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--without-local-model", action="store_true",
                    help="remove the readers served by the local llama.cpp server (lcrag's own work only)")
    ap.add_argument("--raw", help="also keep py-spy's raw output here")
    a = ap.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("py-spy is not installed: pip install -e '.[profile]'", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-profile-reproduce-"))
    params = a.params
    if a.without_local_model:
        from bench_reproduce import without_local_model

        params = str(without_local_model(a.params, tmp / "profile-no-local-model.yaml")[0])
    raw = Path(a.raw) if a.raw else tmp / "pyspy.txt"
    cmd = [spy, "record", "--subprocesses", "--rate", str(a.rate), "--format", "raw", "-o", str(raw), "--",
           str(Path(sys.executable).parent / "lcrag"), "reproduce", "--params", params, "--out", str(tmp / "figures"),
           "--runs", str(tmp / "runs")] + (["--only", *a.only] if a.only else [])
    log = tmp / "reproduce.log"
    with open(log, "w") as fh:
        code = subprocess.call(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    done = re.findall(r"\] (\S+\.ipynb) done in ([0-9.]+) s", log.read_text())
    print("notebook wall times: " + "; ".join(f"{nb[:2]} {float(t):.1f} s" for nb, t in done)
          + f" (sum {sum(float(t) for _, t in done):.1f} s)")
    if code or not raw.exists():
        print(log.read_text()[-3000:])
        return code or 1
    started = re.findall(r"\] running (\S+\.ipynb)", log.read_text())  # the order their kernels started
    print(aggregate(raw, started or [nb for nb, _ in done], a.rate, a.top))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
