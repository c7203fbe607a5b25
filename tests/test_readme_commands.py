"""Every shell command shown in a ```bash block of the README and of the guides listed in :data:`GUIDES` is run here,
so the text cannot drift from the command line.

A command runs as written, in a scratch directory laid out like the checkout (``params/`` linked, ``docs/`` copied,
an empty ``figures/``), with ``lcrag`` the package under test. The exceptions are listed in one place:

* :data:`STAND_IN` — commands that start the local model server: a loopback OpenAI-compatible stand-in
  (``tests/fakes/scripted_chat_server.py``) serves instead, on a free loopback port (the shown port may be taken on
  a shared machine), and the commands after it run as written with the shown port replaced by that one;
* :data:`COVERED` — commands too long for a test, with the tests that cover them.

A command in a block that is in neither list and fails (or is missing from the blocks while listed) fails the test.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.scripted_chat_server import ScriptedChatServer

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # fresh interpreters importing lcrag, a study run end to end

#: the guides whose bash blocks are run, beside README.md (docs/commands.md holds synopses, not commands)
GUIDES = ("docs/reproducing.md", "docs/docs_site.md", "docs/reproduced_figures.md")
#: command -> what runs instead (module doc)
STAND_IN = {
    "lcrag serve --port 8765 --alias my-model &":
        "a loopback chat server on 127.0.0.1:8765 answering as my-model (the real `lcrag serve` and a run against "
        "it: tests/test_new_user_walkthrough.py)",
}
#: command -> the tests that cover it (module doc)
COVERED = {
    "make reproduce": "tests/test_notebook_reproduced.py (notebook 01 exactly as make reproduce runs it), "
                      "nbval on every notebook in make test",
    "make test": "CI runs it (.ci/run); this test is part of it",
    "lcrag reproduce --params params/paper.yaml --rehearse":
        "tests/test_rehearsal.py (the same rehearsal of every notebook, at --limit 1 with --jobs 2)",
    "lcrag reproduce --params params/paper.yaml --rehearse --limit 1 --out /tmp/rehearsal":
        "tests/test_rehearsal.py (this rehearsal, with --jobs 2 and its output in a temporary folder)",
}


def shell_commands(text: str) -> list[str]:
    """The commands of the ```bash blocks of a Markdown text: one per line (a line ending in ``\\`` continues), a
    trailing ``# comment`` and comment-only lines dropped."""
    out = []
    for block in re.findall(r"(?ms)^```bash\n(.*?)^```", text):
        for line in re.sub(r"\s*\\\n\s*", " ", block).splitlines():
            cmd = re.sub(r"\s+#\s.*$", "", line).strip()
            if cmd and not cmd.startswith("#"):
                out.append(cmd)
    return out


def all_commands() -> list[tuple[str, str]]:
    return [(name, c) for name in ("README.md", *GUIDES) for c in shell_commands((ROOT / name).read_text())]


def test_shell_commands_reads_blocks_continuations_and_comments():
    text = "x\n```bash\nlcrag a   # note\n# only a comment\nlcrag b \\\n  --c d\n```\n```text\nlcrag e\n```\n"
    assert shell_commands(text) == ["lcrag a", "lcrag b --c d"]


def test_every_listed_exception_is_still_shown():
    shown = {c for _, c in all_commands()}
    assert set(STAND_IN) <= shown and set(COVERED) <= shown, set(STAND_IN) | set(COVERED) - shown


def test_every_command_of_the_readme_and_guides_runs(tmp_path):
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "params").symlink_to(ROOT / "params")
    shutil.copytree(ROOT / "docs", work / "docs")
    (work / "figures").mkdir()
    bindir = tmp_path / "bin"  # `lcrag` on PATH: this checkout's package under this interpreter
    bindir.mkdir()
    (bindir / "lcrag").write_text(f"#!/bin/sh\nexec {sys.executable} -m lcrag.cli \"$@\"\n")
    (bindir / "lcrag").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("OPENAI_API_KEY", None)
    server = None
    ran, replaced = [], []
    try:
        for where, cmd in all_commands():
            if cmd in COVERED:
                continue
            if cmd in STAND_IN:
                shown_port = re.search(r"--port (\d+)", cmd).group(1)
                server = ScriptedChatServer(lambda messages: '{"answer": "unknown", "lines": [0]}')
                server.thread.start()
                replaced.append(cmd)
                continue
            if server is not None:
                cmd = cmd.replace(f"127.0.0.1:{shown_port}", f"127.0.0.1:{server.httpd.server_address[1]}")
            r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=900)
            assert r.returncode == 0, f"{where}: `{cmd}` exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
            assert "Traceback (most recent call last)" not in r.stderr, f"{where}: `{cmd}`\n{r.stderr[-3000:]}"
            ran.append(cmd)
    finally:
        if server is not None:
            server.httpd.shutdown()
            server.httpd.server_close()
    assert server is not None and server.requests, "the README's run never reached the stand-in endpoint"
    assert {r["model"] for r in server.requests} == {"my-model"}
    report = work / "runs" / "mine" / "report"
    assert any(report.glob("*.html")), sorted(p.name for p in report.iterdir())
    assert len(ran) >= 6, ran
