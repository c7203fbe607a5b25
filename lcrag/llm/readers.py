"""Readers behind one interface: they take a ``ReadRequest`` and return a ``CallResult``.

* ``ChatReader`` — any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp server),
  configured by a profile (built-ins in ``lcrag/resources/readers/``, :mod:`lcrag.resources`); one parameter change moves a sweep
  from the offline default to a real model.
* ``ExtractiveReader`` — the deterministic, model-free baseline (``lcrag.llm.extractive``),
  labelled "extractive baseline (no model)" wherever it appears.

A reader sees the rendered context and messages, never a retriever (architecture notes).
Caching, parsing, resume and scoring live in ``lcrag.runner``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..files.textio import read_text
from ..types import Context
from .client import CallResult, ChatClient
from .extractive import context_index, extract
from .profiles import ReaderProfile, load_profile


@dataclass
class ReadRequest:
    messages: list[dict[str, str]]
    expects_json: bool
    context: Context | None = None
    question: str = ""
    template: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


class Reader:
    """Base class. ``identity()`` enters every cache key; ``read()`` never raises for call errors.

    ``records_replies``: whether :func:`lcrag.llm.call.cached_read` keeps the reader's replies in the
    response cache (and serves them from it, also in ``replay`` mode). A model-free reader says no: it
    makes no call to record or replay, its reply is computed from the request in microseconds, and
    storing it with its request (a haystack of up to a million characters) cost more than computing it
    again — 2.3 s of notebook 01's 2,356 extractive replies, 0.26 GB written per reproduction.
    """

    profile: ReaderProfile
    records_replies: bool = True

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def label(self) -> str:
        return self.profile.display

    def identity(self) -> dict[str, Any]:
        return {"family": self.profile.family, "model": self.profile.model or self.profile.name, "decoding": self.profile.decoding()}

    def read(self, request: ReadRequest) -> CallResult:  # pragma: no cover - interface
        raise NotImplementedError


class ChatReader(Reader):
    def __init__(self, profile: ReaderProfile):
        from .pool import make_chat_client

        self.profile = profile
        self.client: ChatClient = make_chat_client(profile)  # a PooledChatClient when base_urls lists replicas

    def read(self, request: ReadRequest) -> CallResult:
        messages = request.messages
        if self.profile.cache_breakpoint == "context" and request.context is not None:
            from .breakpoints import mark_context

            messages = mark_context(messages, request.context.text)
        return self.client.chat(messages, expects_json=request.expects_json)


class ExtractiveReader(Reader):
    """Model-free baseline; answers JSON prompts with ``{"lines", "answer"}`` and others with text.
    Its replies are computed on every run, never stored in the response cache (``records_replies``)."""

    passes = 2  # two lexical passes, the second expanded with hop 1's entities
    records_replies = False

    def __init__(self, profile: ReaderProfile):
        self.profile = profile

    def identity(self) -> dict[str, Any]:
        """The base identity plus ``cite_k``, which changes its answers (so cache key and resume see it)."""
        return {**super().identity(), "cite_k": self.profile.cite_k}

    def read(self, request: ReadRequest) -> CallResult:
        if request.context is None:
            return CallResult(False, error="extractive reader needs the rendered context")
        ctx = request.context
        index = context_index(ctx)  # built once per context, shared by the prompts asked over it
        memo = ctx.__dict__.setdefault("_extractive_answers", {})  # same context and question under several prompts
        key = (request.question, self.profile.cite_k, self.passes)
        if key not in memo:
            memo[key] = extract(index, request.question, cite_k=self.profile.cite_k, passes=self.passes)
        answer, lines = memo[key]
        text = json.dumps({"lines": lines, "answer": answer}) if request.expects_json else answer
        return CallResult(True, text=text, attempts=1)


class SinglePassExtractiveReader(ExtractiveReader):
    """The single-pass lexical baseline: cites the top lines for the question alone (no bridging)."""

    passes = 1


_REGISTRY: dict[str, type[Reader]] = {"openai": ChatReader, "extractive": ExtractiveReader,
                                      "extractive-single": SinglePassExtractiveReader}


def reader_kinds() -> dict[str, type[Reader]]:
    """The live table ``kind -> Reader class`` that :func:`make_reader` reads (``lcrag.registry`` binds to it)."""
    return _REGISTRY


def register_reader_kind(kind: str, cls: type[Reader]) -> None:
    """Extension point: make ``kind: <kind>`` in a profile build ``cls(profile)``."""
    _REGISTRY[kind] = cls


def make_reader(spec: str | dict[str, Any] | ReaderProfile, **overrides: Any) -> Reader:
    """Build a reader from a profile name (:func:`lcrag.llm.profiles.load_profile`), path, dict or profile."""
    profile = spec if isinstance(spec, ReaderProfile) else load_profile(spec, **overrides)
    if isinstance(spec, ReaderProfile) and overrides:
        profile = spec.model_copy(update=overrides)
    from .server import local_url

    if local_url(profile.base_url) != profile.base_url:  # inside serve_for: this run's own local server
        profile = profile.model_copy(update={"base_url": local_url(profile.base_url)})
    try:
        cls = _REGISTRY[profile.kind]
    except KeyError:
        from ..files.yamlpos import node_line

        src = Path(profile._source)
        line = node_line(read_text(src), "kind") if src.is_file() else None
        raise ConfigError(src, f"unknown reader kind {profile.kind!r}; registered: {', '.join(sorted(_REGISTRY))}",
                          line=line, field="kind") from None
    return cls(profile)
