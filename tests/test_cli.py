import subprocess
import sys

import pytest

from lcrag.cli import main
from lcrag.reproduction.reproduce import load_profile
from lcrag.errors import ConfigError


def _run(*args):
    return subprocess.run([sys.executable, "-m", "lcrag.cli", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_commands():
    r = _run("--help")
    assert r.returncode == 0
    for cmd in ("reproduce", "cache", "serve"):
        assert cmd in r.stdout


def test_reproduce_help():
    r = _run("reproduce", "--help")
    assert r.returncode == 0 and "--only" in r.stdout and "--params" in r.stdout


def test_bad_profile_is_a_clear_error(tmp_path, capsys):
    p = tmp_path / "bad.yaml"
    p.write_text("cache_mode: sometimes\n")
    with pytest.raises(ConfigError, match="cache_mode"):
        load_profile(p)
    p.write_text("notebooks:\n  '01': [1, 2\n")
    with pytest.raises(ConfigError, match=r"bad.yaml, line \d"):
        load_profile(p)
    p.write_text("colour: blue\n")
    with pytest.raises(ConfigError, match="colour"):
        load_profile(p)
    assert main(["reproduce", "--params", str(p), "--only", "01"]) == 2
    assert "colour" in capsys.readouterr().err


def test_unknown_notebook_selection():
    assert main(["reproduce", "--only", "99"]) == 2


def test_cache_stats(tmp_path):
    r = _run("cache", "stats", "--db", str(tmp_path / "c.sqlite"))
    assert r.returncode == 0 and '"entries": 0' in r.stdout
