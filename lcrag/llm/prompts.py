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


from ..config import params_dir
from ..errors import ConfigError
from ..textio import read_yaml


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
    """Load template ``name`` (file stem) from ``directory``, ``$LCRAG_PROMPTS_DIR`` or ``params/prompts``.

    Parsed templates are memoised per file state (modification time and size), so a
    template edited while a process runs (e.g. a notebook kernel) is read again.
    """
    directory = directory or os.environ.get("LCRAG_PROMPTS_DIR") or None
    stamp: tuple[int, int] | None = None
    for d in _dirs(directory):
        p = d / f"{name}.yaml"
        if p.is_file():
            st = p.stat()
            stamp = (st.st_mtime_ns, st.st_size)
            break
    return _load_prompt(name, directory, stamp)


@lru_cache(maxsize=64)
def _load_prompt(name: str, directory: str | None, stamp: tuple[int, int] | None = None) -> PromptTemplate:
    for d in _dirs(directory):
        p = d / f"{name}.yaml"
        if p.is_file():
            break
    else:
        known = sorted(q.stem for d in _dirs(directory) if d.is_dir() for q in d.glob("*.yaml"))
        raise ConfigError(params_dir() / "prompts", f"unknown prompt template {name!r}; known: {', '.join(known)}", field="prompt")
    doc, text = read_yaml(p)
    if not isinstance(doc, dict):
        raise ConfigError(p, "expected a mapping")

    def bad(key: str, msg: str) -> ConfigError:
        from ..yamlpos import node_line

        return ConfigError(p, msg, line=node_line(text, key), field=key)

    for key in ("user", "version"):
        if key not in doc:
            raise ConfigError(p, "missing field", field=key)
    user = doc["user"]
    if not isinstance(user, str) or "{haystack}" not in user or "{question}" not in user:
        raise bad("user", "user template must be a text containing {haystack} and {question}")
    v = doc["version"]
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, str) and v.strip().isdigit())):
        raise bad("version", f"version must be an integer, got {v!r}")
    if doc.get("system") is not None and not isinstance(doc["system"], str):
        raise bad("system", "system must be a text (or absent)")
    if not isinstance(doc.get("expects_json", True), bool):
        raise bad("expects_json", "expects_json must be true or false")
    return PromptTemplate(name=doc.get("name", name), version=int(v), user=user,
                          system=doc.get("system") or None, expects_json=doc.get("expects_json", True))
