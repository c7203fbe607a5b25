"""Reasoning models: reasoning text kept apart from the answer, and refused request shapes.

Reasoning text comes in two forms:

* a separate message field — ``reasoning_content`` (DeepSeek, vLLM's reasoning parsers, the
  loopback fault server) or ``reasoning`` (newer vLLM / OpenRouter);
* ``<think>…</think>`` blocks inside the content (open-weight servers without a reasoning
  parser). A block left open at the end (the reply was cut inside its reasoning) is reasoning
  to the end; a content with a closing ``</think>`` but no opening tag (chat templates that put
  ``<think>`` in the prompt) has its reasoning before that tag.

Only the answer (the content without reasoning) is parsed and scored; the reasoning is stored
beside it in the result row.

A refused request shape (HTTP 400 whose error names ``max_tokens``, ``max_completion_tokens``,
``temperature`` or ``reasoning_effort``, as OpenAI's reasoning models answer) becomes a
``RequestShapeError``: a ``ConfigError`` naming the profile file, the line and the field to change.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)

# refused parameter -> (profile field, what to set)
FIX: dict[str, tuple[str, str]] = {
    "max_tokens": ("token_param", "set `token_param: max_completion_tokens` in the reader profile"),
    "max_completion_tokens": ("token_param", "set `token_param: max_tokens` in the reader profile"),
    "temperature": ("send_temperature", "set `send_temperature: false` in the reader profile"),
    "reasoning_effort": ("reasoning_effort", "remove `reasoning_effort` from the reader profile (or use a value the model accepts)"),
}


class RequestShapeError(ConfigError):
    """The endpoint refused the request shape of a reader profile; names the field to change."""


def split_think(content: str) -> tuple[str, str]:
    """``(answer, reasoning)`` of a content that may hold ``<think>`` blocks (see module doc)."""
    if "<think>" not in content and "</think>" not in content:
        return content, ""
    parts = _THINK.findall(content)
    rest = _THINK.sub("", content)
    if "</think>" in rest and "<think>" not in rest:  # opening tag was in the prompt
        before, rest = rest.split("</think>", 1)
        parts.insert(0, before)
    if "<think>" in rest:  # left open: cut inside its reasoning
        rest, tail = rest.split("<think>", 1)
        parts.append(tail)
    return rest.strip(), "\n\n".join(p.strip() for p in parts if p.strip())


def split_reasoning(message: Any) -> tuple[str, str]:
    """``(answer, reasoning)`` of a chat completion message (an ``openai`` object or a dict)."""
    get = message.get if isinstance(message, dict) else (lambda k, d=None: getattr(message, k, d))
    content = get("content") or ""
    field_reasoning = get("reasoning_content") or get("reasoning") or ""
    if not isinstance(field_reasoning, str):
        field_reasoning = str(field_reasoning)
    answer, think = split_think(content)
    reasoning = "\n\n".join(x for x in (field_reasoning.strip(), think) if x)
    return answer, reasoning


def _error_body(exc: Exception) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    return body if isinstance(body, dict) else {}


def request_shape_error(profile, exc: Exception) -> RequestShapeError | None:
    """A ``RequestShapeError`` when ``exc`` is an HTTP 400 refusing a request-shape parameter, else None."""
    if getattr(exc, "status_code", None) != 400:
        return None
    body = _error_body(exc)
    param = body.get("param")
    msg = str(body.get("message") or exc)
    if param not in FIX:  # some servers omit `param`: find the parameter named in the message
        param = next((p for p in FIX if f"'{p}'" in msg), None)
    if param is None:
        return None
    field, fix = FIX[param]
    from ..files.yamlpos import node_line

    src = Path(getattr(profile, "_source", "") or "")
    text = src.read_text(encoding="utf-8") if src.is_file() else None
    where: str | Path = src if src.is_file() else f"reader profile {profile.name}"
    code = body.get("code") or "HTTP 400"
    return RequestShapeError(where, f"the endpoint refused the request shape of reader {profile.name!r} "
                                    f"({code}: {msg}); {fix}",
                             line=node_line(text, field) if text else None, field=field)
