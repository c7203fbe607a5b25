"""The wheel works outside the checkout: build it, install it into a fresh virtual environment, run studies there.

Offline by design: the wheel is built without build isolation (the test interpreter's setuptools) from a copy of
the sources in a temporary directory (so nothing is written into the checkout), and installed with ``--no-deps``
into a new venv; the dependencies come from the test interpreter's own ``site-packages``, named in a ``.pth``
file of the new venv (a path line only: the ``.pth`` files there — the checkout's editable install among them —
are not processed, and the venv's own ``site-packages``, holding the wheel's ``lcrag``, comes first). Every
command runs with its working directory outside the checkout and without ``PYTHONPATH``.

Checked there: ``lcrag`` is imported from the venv, the built-in prompt ``ebg`` and reader profile ``extractive``
load (package data), every built-in study (``lcrag studies`` as the wheel lists them, LongEval included: its
variants and prompt are package data of its folder) runs with its model-free default reader at a small size
(``--limit 2``; the studies that need the data directory get ``LCRAG_DATA_DIR`` when the test run has one and skip
otherwise), and an own study (the generated example corpus, with a prompt of the user's own from ``$LCRAG_PARAMS_DIR``) run with
``lcrag run`` and write their rows.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from lcrag.config import PROJECT_ROOT, data_dir

pytestmark = pytest.mark.slow

OWN_STUDY = """\
name: wheel-own
description: "generated example corpus, model-free reader (packaging check)"
data:
  example: {n_companies: 4, n_towns: 4, seed: 0}
prompts: [mine]
lc: {budgets: [full]}
rag: {chunkers: [sentences], retrievers: [bm25], k: [2]}
readers: [extractive]
out: runs/wheel-own
"""

MY_PROMPT = """\
name: mine
version: 1
expects_json: true
system: "Answer from the numbered lines only."
user: |
  {haystack}

  Question: {question}
  Reply as JSON: {"answer": "...", "lines": [numbers of the lines you used]}
"""


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, f"{cmd}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}"
    return r


def _dependency_dirs() -> list[str]:
    """The test interpreter's site-packages directories (where the dependencies are), never the checkout itself.

    A virtual environment inside the checkout (``make install``'s ``.venv``) is kept: its ``site-packages`` holds
    the dependencies, and only the editable install's ``.pth`` there points back to the sources, which a path line
    in another ``.pth`` does not process."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    root = PROJECT_ROOT.resolve()
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir() and Path(d).resolve() != root]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(python, lcrag, env, workdir)`` of a fresh venv with the wheel installed (module doc)."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(PROJECT_ROOT / name, src / name)
    shutil.copytree(PROJECT_ROOT / "lcrag", src / "lcrag", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", str(dist), str(src)], cwd=base)
    wheel = next(dist.glob("lcrag-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "lcrag/resources/prompts/ebg.yaml" in names and "lcrag/resources/readers/extractive.yaml" in names
    assert {"lcrag/studies/longeval/resources/longeval_variants.yaml",
            "lcrag/studies/longeval/resources/longeval_prompts.yaml"} <= set(names)
    assert {f"lcrag/studies/{d}/benchmark.yaml" for d in ("synthetic", "nolima", "multihop_rag", "qasper_mp", "longeval",
                                                           "conditions", "own_study")} <= set(names)
    assert not [n for n in names if n.startswith("tests/") or n.endswith(("faultserver.py", "batchserver.py"))]

    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    py = venv / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base).stdout.strip()
    (Path(purelib) / "lcrag_test_deps.pth").write_text("\n".join(_dependency_dirs()) + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q", str(wheel)],
         cwd=base)
    work = base / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LCRAG_DATA_DIR", "LCRAG_PROMPTS_DIR",
                                                             "LCRAG_PARAMS_DIR", "LCRAG_CACHE_MODE", "VIRTUAL_ENV")}
    env.update(LCRAG_CACHE_DIR=str(base / "cache"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="Agg")
    return py, venv / "bin" / "lcrag", env, work


def _rows(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines() if x.strip()]


def test_the_installed_package_reads_its_own_prompts_and_profiles(installed):
    py, _, env, work = installed
    code = ("import lcrag, json; from lcrag.resources.templates import load_prompt; from lcrag.llm.profiles import load_profile; "
            "p = load_prompt('ebg'); r = load_profile('extractive'); "
            "print(json.dumps([lcrag.__file__, p.label, p.expects_json, r.name, r.kind]))")
    where, label, expects_json, name, kind = json.loads(_run([str(py), "-c", code], cwd=work, env=env).stdout)
    assert Path(where).resolve().is_relative_to(py.parent.parent.resolve()), where  # the wheel's, not the checkout's
    assert label.startswith("ebg@v") and expects_json and (name, kind) == ("extractive", "extractive")


def test_the_installed_wheel_finds_its_study_folders_by_walking_them(installed):
    """The scoreboard, the figures index and the measure registry find the built-in folders of the installed package
    (their ``benchmark.yaml`` and ``paper.yaml`` are package data), not the checkout's."""
    py, _, env, work = installed
    code = ("import json; from lcrag import measures; from lcrag.outputs import scoreboard, figures_index; "
            "print(json.dumps([list(scoreboard.studies()), [scoreboard.paper_label(s) for s in scoreboard.studies()], "
            "sorted(figures_index.benchmarks()), len(scoreboard.paper_values('longeval')['cells']), "
            "measures.get('synthetic_evid_exact_set').label]))")
    studies, papers, words, n_longeval, label = json.loads(_run([str(py), "-c", code], cwd=work, env=env).stdout)
    assert studies == ["synthetic", "nolima", "multihop_rag", "qasper_mp", "longeval", "conditions"]
    assert papers == ["EBG", "EBG", "EBG", "EBG", "LongEval", "EBG"]
    assert words == ["conditions", "longeval", "multihop", "nolima", "qasper", "quickstart", "synthetic"]
    assert n_longeval > 0 and label == "Evid (exact set)"


def test_lcrag_run_a_built_in_study_from_the_installed_wheel(installed):
    _, lcrag, env, work = installed
    out = work / "builtin"
    _run([str(lcrag), "run", "synthetic-two-hop", "--set", "data.params.lengths=[10000]", "--set", "data.params.trials=2",
          "--set", "tasks.params.conditions=[LC, no-context, oracle, RAG-bm25-single]", "--reader", "extractive",
          "--out", str(out), "--quiet"], cwd=work, env=env)
    rows = _rows(out)
    assert len(rows) == 2 * 4 * 2  # 2 trials x 4 conditions x 2 prompts, one reader
    assert {r["outcome"] for r in rows} == {"ok"}
    assert {r["condition"] for r in rows} == {"LC", "no-context", "oracle", "RAG-bm25-single"}
    oracle = [r for r in rows if r["condition"] == "oracle" and r["prompt"] == "ebg"]
    assert oracle and all(r["answer"] not in ("", "NA") and r["lines"] for r in oracle)  # gold lines only: answered
    assert (out / "manifest.json").is_file()


# every built-in study: (--set overrides for a small run, needs the data directory); the same items as the paper's
# design, cut by --limit 2 (sizes as in tests/experiment/test_inspect_every_study.py)
BUILTIN = {
    "synthetic-two-hop": (["data.params.lengths=[10000]", "data.params.trials=2"], False),
    "nolima-lc": (["data.params.lengths=[10000]", "tasks.params.settings=[SN]"], False),
    "nolima-attribution": (["data.params.lengths=[10000]"], False),
    "nolima-cot": ([], False),
    "nolima-rag": (["data.params.lengths=[10000]"], True),
    "nolima-rag-vs-lc": (["data.params.lengths=[10000]"], True),
    "nolima-rerank": (["tasks.params.methods=[bm25]"], True),
    "multihop-rag": (["data.params.n=3", "tasks.params.retriever=bm25", "tasks.params.ks=[4]"], False),
    "qasper-mp": (["data.params.counts={boolean: 1, extractive: 1}", "tasks.params.retriever=bm25",
                   "tasks.params.ks=[3]", "tasks.params.scopes=[pool11]"], False),
    "longeval": (["data.params.queries=fulltext", "tasks.params.variants=[concat-baseline]"], True),
}
DATA = data_dir()


def test_the_installed_wheel_lists_every_built_in_study(installed):
    _, lcrag, env, work = installed
    out = _run([str(lcrag), "studies"], cwd=work, env=env).stdout
    listed = {ln.split()[0] for ln in out.splitlines()[1:] if ln.strip() and not ln.startswith("lcrag ")}
    assert listed == set(BUILTIN), "a built-in study was added or removed: add it to BUILTIN"


@pytest.mark.parametrize("name", list(BUILTIN))
def test_every_built_in_study_runs_from_the_installed_wheel(installed, name):
    _, lcrag, env, work = installed
    sets, needs_data = BUILTIN[name]
    if needs_data and DATA is None:
        pytest.skip("needs the data directory (LCRAG_DATA_DIR; `lcrag data list` says what is expected)")
    if DATA is not None:
        env = {**env, "LCRAG_DATA_DIR": str(DATA)}
    out = work / f"every-{name}"
    _run([str(lcrag), "run", name, "--limit", "2", *[a for s in sets for a in ("--set", s)], "--out", str(out), "--quiet"],
         cwd=work, env=env)
    rows = _rows(out)
    assert rows and {r["outcome"] for r in rows} == {"ok"}, name
    assert (out / "manifest.json").is_file()
    if name == "longeval":  # the variant named in the folder's built-in longeval_variants.yaml ran, with its prompt
        assert {r["condition"] for r in rows} == {"concat-baseline"}
        assert all(r["answer"] for r in rows)


def test_lcrag_run_an_own_study_with_an_own_prompt_from_the_installed_wheel(installed):
    _, lcrag, env, work = installed
    own = work / "own"
    (own / "params" / "prompts").mkdir(parents=True)
    (own / "params" / "prompts" / "mine.yaml").write_text(MY_PROMPT)
    (own / "study.yaml").write_text(OWN_STUDY)
    _run([str(lcrag), "run", "study.yaml", "--quiet"], cwd=own, env={**env, "LCRAG_PARAMS_DIR": str(own / "params")})
    rows = _rows(own / "runs" / "wheel-own")
    items = [json.loads(x) for x in (own / "runs" / "wheel-own" / "data" / "items.jsonl").read_text().splitlines() if x.strip()]
    assert items and len(rows) == len(items) * 4  # no-context, oracle, LC-full, RAG-bm25-sentences-k2
    assert {r["outcome"] for r in rows} == {"ok"} and {r["prompt"] for r in rows} == {"mine"}
    gold = {it["id"]: {a.lower() for a in it["answers"]} for it in items}
    for r in rows:
        if r["condition"] in ("oracle", "LC-full"):  # the extractive reader finds the answer when the gold lines are there
            assert r["answer"].lower() in gold[r["item_id"]], r
        if r["condition"] == "no-context":
            assert r["answer"] == "NA"
