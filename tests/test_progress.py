"""Progress of a sweep: a plain line with done/total, calls/s, cache hits, spend and ETA when stderr is no terminal."""

import io
import re
import subprocess
import sys

import pytest

from fakes.scripted_chat_server import ScriptedChatServer
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.cache import ResponseCache
from lcrag.llm.readers import make_reader
from lcrag.runner import Task, run_tasks
from lcrag.runtime.progress import Progress, choose_mode
from lcrag.types import Item

LINE = re.compile(r"\[lcrag\] t · scripted: (\d+)/(\d+) calls \(\d+%\) · [\d.]+ calls/s · (\d+) cache hits · "
                  r"(\d+) failed · \$([\d.]+) spent · (ETA [^\n]+|done)")


def _tasks(n):
    ctx = render_numbered([SourceLine(text="Alpha is red.", role="needle"), SourceLine(text="Beta is blue.")], base=0)
    return [Task(item=Item(id=f"q{i}", question=f"Which one is red? ({i})", answers=("Alpha",)), context=ctx,
                 prompt="ebg", condition="LC-tiny") for i in range(n)]


def _score(task, resp):
    return {"ans": float("Alpha" in resp.answer)}


def test_headless_run_prints_progress_lines_on_stderr(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LCRAG_PROGRESS", raising=False)
    monkeypatch.setenv("LCRAG_PROGRESS_EVERY_N", "4")
    reply = '{"answer": "Alpha", "lines": [0]}'
    with ScriptedChatServer(lambda m: reply) as srv:
        reader = make_reader(srv.profile(concurrency=2))
        cache = ResponseCache(tmp_path / "c.sqlite")
        run_tasks(_tasks(4), reader, run="t", results_path=tmp_path / "a.jsonl", scorer=_score, cache=cache)
        capsys.readouterr()
        run_tasks(_tasks(10), reader, run="t", results_path=tmp_path / "b.jsonl", scorer=_score, cache=cache)
    err = capsys.readouterr().err
    assert "\r" not in err  # no bar frames in a log
    lines = [m.groups() for m in LINE.finditer(err)]
    assert [(int(d), int(t)) for d, t, *_ in lines] == [(4, 10), (8, 10), (10, 10)], err
    done, total, hits, failed, spent, eta = lines[-1]
    assert int(hits) == 4 and int(failed) == 0 and eta == "done"
    # 6 new calls of 10 + 5 tokens at $1 / 1M each
    assert float(spent) == pytest.approx(6 * 15 / 1e6, abs=1e-4)
    assert lines[0][5].startswith("ETA ")


def test_progress_line_every_so_many_seconds_and_final_line():
    buf = io.StringIO()
    p = Progress(100, initial=20, desc="r · m", stream=buf, every_s=0.0, every_n=1000, mode="lines")
    p.update(cached=True)
    p.update(usd=0.5)
    p.close()
    out = buf.getvalue().splitlines()
    assert len(out) == 2 and out[0].startswith("[lcrag] r · m: 21/100 calls (21%)")
    assert "1 cache hits" in out[1] and "$0.5000 spent" in out[1] and "22/100" in out[1] and "ETA" in out[1]


def test_mode_is_lines_without_a_terminal_and_bar_on_one(monkeypatch):
    monkeypatch.delenv("LCRAG_PROGRESS", raising=False)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert choose_mode(True, io.StringIO()) == "lines"
    assert choose_mode(True, Tty()) == "bar"
    assert choose_mode(False, Tty()) == "off"
    monkeypatch.setenv("LCRAG_PROGRESS", "off")
    assert choose_mode(True, Tty()) == "off"
    monkeypatch.setenv("LCRAG_PROGRESS", "loud")
    with pytest.raises(ValueError, match="LCRAG_PROGRESS"):
        choose_mode(True, Tty())


@pytest.mark.slow
def test_loading_minilm_prints_no_weight_loading_bar():
    code = "from lcrag.embeddings.encoders import load_minilm; load_minilm(); print('loaded')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "loaded" in out.stdout, out.stderr[-2000:]
    assert "Loading weights" not in out.stderr and "%|" not in out.stderr, out.stderr[-2000:]


@pytest.mark.slow
def test_a_notebook_kernel_gets_the_widget_bar_and_no_tqdm_warning(tmp_path):
    pytest.importorskip("ipywidgets", reason="the notebooks extra installs ipywidgets")
    import nbformat
    import papermill as pm

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from lcrag.runtime.progress import Progress, choose_mode\n"
        "mode = choose_mode()\n"
        "p = Progress(3, desc='nb')\n"
        "for _ in range(3):\n    p.update(cached=True)\n"
        "p.close()\n"
        "print('mode', mode, p.mode)")]
    src, out = tmp_path / "p.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    pm.execute_notebook(str(src), str(out), cwd=str(tmp_path), progress_bar=False, kernel_name="python3")
    text = out.read_text()
    assert "mode notebook notebook" in text
    assert "TqdmWarning" not in text and "IProgress" not in text and "site-packages" not in text
    assert "application/vnd.jupyter.widget-view+json" in text  # tqdm's widget bar


def test_lcrag_run_in_a_pipe_prints_progress_lines(tmp_path):
    """``lcrag run`` as under nohup / CI: standard error is a pipe, not a terminal."""
    import json
    import os

    import yaml

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What colour is car {i}?", "answers": ["red"],
                                         "documents": [{"id": f"d{i}", "text": f"The car {i} is red."}],
                                         "evidence": [{"doc_id": f"d{i}", "text": f"The car {i} is red."}]}) + "\n"
                             for i in range(6)))
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump({"name": "pipe", "data": {"items": str(items)}, "readers": ["extractive"],
                                     "rag": {"enabled": False}, "scorers": ["ans_contains"], "serve_local": False}))
    env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "LCRAG_PROGRESS_EVERY_N": "4"}
    env.pop("LCRAG_PROGRESS", None)
    out = subprocess.run([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = re.findall(r"\[lcrag\] pipe@\w+ · extractive: (\d+)/(\d+) calls .* cache hits .* spent · (?:ETA|done)",
                       out.stderr)
    assert lines and lines[-1][0] == lines[-1][1], out.stderr[-2000:]
    assert "\r" not in out.stderr
