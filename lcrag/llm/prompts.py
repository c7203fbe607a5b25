"""Prompt templates as files under ``params/prompts/<name>.yaml`` (EBG paper App. A).

A template has ``name``, ``version`` (part of every cache key), ``expects_json`` (whether the
response is parsed as ``{"answer", "lines"}``), an optional ``system`` text and a ``user``
text with ``{haystack}`` and ``{question}`` placeholders. Users add their own templates by
dropping a file in ``params/prompts/`` or passing a directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from ..config import params_dir
from ..errors import ConfigError


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: int
    user: str
    system: str | None = None
    expects_json: bool = True

    def messages(self, haystack: str, question: str) -> list[dict[str, str]]:
        """Chat messages with the haystack and question substituted (plain ``str.replace``,
        so braces inside haystacks are safe)."""
        user = self.user.replace("{haystack}", haystack).replace("{question}", question)
        msgs = []
        if self.system:
            msgs.append({"role": "system", "content": self.system})
        msgs.append({"role": "user", "content": user})
        return msgs

    @property
    def label(self) -> str:
        return f"{self.name}@v{self.version}"


def _dirs(extra: str | Path | None) -> list[Path]:
    ds = [Path(extra)] if extra else []
    ds.append(params_dir() / "prompts")
    return ds


def load_prompt(name: str, directory: str | None = None) -> PromptTemplate:
    """Load template ``name`` (file stem) from ``directory``, ``$LCRAG_PROMPTS_DIR`` or ``params/prompts``."""
    return _load_prompt(name, directory or os.environ.get("LCRAG_PROMPTS_DIR") or None)


@lru_cache(maxsize=64)
def _load_prompt(name: str, directory: str | None) -> PromptTemplate:
    for d in _dirs(directory):
        p = d / f"{name}.yaml"
        if p.is_file():
            break
    else:
        known = sorted(q.stem for d in _dirs(directory) if d.is_dir() for q in d.glob("*.yaml"))
        raise ConfigError(params_dir() / "prompts", f"unknown prompt template {name!r}; known: {', '.join(known)}", field="prompt")
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(p, f"invalid YAML: {e}", line=(mark.line + 1) if mark else None) from None
    if not isinstance(doc, dict):
        raise ConfigError(p, "expected a mapping")
    for key in ("user", "version"):
        if key not in doc:
            raise ConfigError(p, "missing field", field=key)
    user = doc["user"]
    if "{haystack}" not in user or "{question}" not in user:
        raise ConfigError(p, "user template must contain {haystack} and {question}", field="user")
    return PromptTemplate(name=doc.get("name", name), version=int(doc["version"]), user=user,
                          system=doc.get("system") or None, expects_json=bool(doc.get("expects_json", True)))
