"""Prompt templates as YAML files ``<name>.yaml`` (EBG paper App. A).

A template has ``name``, ``version`` (part of every cache key), ``expects_json`` (whether the
response is parsed as ``{"answer", "lines"}``), an optional ``system`` text and a ``user``
text with ``{haystack}`` and ``{question}`` placeholders. The built-ins ship as package data
(``lcrag/resources/prompts/``); a file of the same name in a user folder overrides one, a new
name adds one: a directory passed to :func:`load_prompt`, ``$LCRAG_PROMPTS_DIR``,
``$LCRAG_PARAMS_DIR/prompts/`` or the checkout's ``params/prompts/`` (order and details:
:mod:`lcrag.resources`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


from .. import resources
from ..errors import ConfigError
from ..files.textio import read_yaml


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


def load_prompt(name: str, directory: str | None = None) -> PromptTemplate:
    """Load template ``name`` (file stem) from ``directory``, ``$LCRAG_PROMPTS_DIR``, the user parameter
    folders or the built-ins, first match first (:mod:`lcrag.resources`).

    Parsed templates are memoised per file state (modification time and size), so a
    template edited while a process runs (e.g. a notebook kernel) is read again.
    """
    directory = directory or os.environ.get("LCRAG_PROMPTS_DIR") or None
    stamp: tuple[int, int] | None = None
    p = resources.locate("prompts", name, directory)
    if p is not None:
        st = p.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    return _load_prompt(name, directory, stamp)


@lru_cache(maxsize=64)
def _load_prompt(name: str, directory: str | None, stamp: tuple[int, int] | None = None) -> PromptTemplate:
    p = resources.locate("prompts", name, directory)
    if p is None:
        known = resources.names("prompts", directory)
        from ..suggest import did_you_mean

        raise ConfigError(resources.user_dir("prompts"), f"unknown prompt template {name!r}{did_you_mean(name, known)}; "
                          f"known: {', '.join(known)} "
                          f"(add {name}.yaml to this folder or to $LCRAG_PARAMS_DIR/prompts)", field="prompt")
    doc, text = read_yaml(p)
    if not isinstance(doc, dict):
        raise ConfigError(p, "expected a mapping")

    def bad(key: str, msg: str) -> ConfigError:
        from ..files.yamlpos import node_line

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
