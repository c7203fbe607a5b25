"""environment.yml lists exactly the packages of pyproject.toml (core and every extra)."""

import re
import tomllib

import yaml

from lcrag.config import PROJECT_ROOT


def _names(specs):
    return {re.split(r"[<>=\[ ]", s, maxsplit=1)[0].lower() for s in specs if not s.startswith("-e")}


def test_environment_matches_pyproject():
    pp = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    want = set(pp["dependencies"])
    for extra in pp["optional-dependencies"].values():
        want |= set(extra)
    env = yaml.safe_load((PROJECT_ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _names(pip) == _names(want)
    assert set(pip) - {"-e ."} == want, "versions differ between environment.yml and pyproject.toml"
