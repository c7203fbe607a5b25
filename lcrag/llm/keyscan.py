"""Keys never leave the environment: refusing API keys where lcrag would write them, and one scrubber for writers.

The only documented path for a key is the environment variable a profile names (``api_key_env``): the key is
read at call time and reaches no file. A key pasted elsewhere — ``base_url: https://host/v1?api_key=sk-…`` or
``extra_body: {api_key: sk-…}`` — would be stored verbatim in ``manifest.json``, in the cache request and in
``lcrag show``'s output, so profile validation refuses it (:func:`url_problem`, :func:`body_problem`), naming
the field and never echoing the value.

What counts as a key: a query parameter or mapping key whose *name* says credential (``api_key``, ``apikey``,
``key``, ``token``, ``access_token``, ``secret``, ``password``, ``authorization``, ``sig``/``signature`` …)
with a non-empty value, or a string *value* shaped like a provider key wherever it appears — the patterns of
detect-secrets / gitleaks for the keys a user of lcrag holds: OpenAI ``sk-…`` / ``sk-proj-…``, Anthropic
``sk-ant-…``, Hugging Face ``hf_…``, Google ``AIza…``, GitHub ``ghp_…``/``github_pat_…``, Slack ``xox?-…``, AWS
access key ids ``AKIA…``/``ASIA…``, Groq ``gsk_…``, Replicate ``r8_…``, and ``Bearer <token>``.

Where each rule applies:

* every string field of a reader profile (``api_key_env``, ``model``, ``label``, ``name`` …) and every string of a
  study file is refused when key-shaped (:func:`find_key`), naming the file the user wrote, the line and the field;
  the message shows the value masked (:func:`mask`). ``api_key_env`` must moreover be a variable *name*
  (letters, digits and ``_``): a pasted key is the commonest way a key reaches a file;
* :func:`scrub` replaces every key-shaped substring with ``[key removed]``; it is applied by every writer of run
  metadata and logs: ``write_atomic`` (manifests, ``results.csv``, reports), the results writer
  (``results.jsonl``), and lcrag's standard output and error (the CLI wraps both), so a key that reaches lcrag by
  another road (a document, a model's reply, an exception message) is not written out either. The response cache
  stores requests and replies verbatim (its keys are hashes of them); keys reach it only through the fields
  refused above.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlparse

SECRET_NAMES = re.compile(r"^(x[-_])?(api[-_]?key|key|token|access[-_]?token|auth[-_]?token|secret|client[-_]?secret|"
                          r"password|passwd|authorization|auth|sig|signature|bearer|credential|credentials)$", re.I)
_SHAPES = (r"sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|"
           r"github_pat_[A-Za-z0-9_]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gsk_[A-Za-z0-9]{20,}|"
           r"r8_[A-Za-z0-9]{20,}|Bearer\s+[A-Za-z0-9._~+/=-]{16,}")
KEY_SHAPES = re.compile(r"(^|[^A-Za-z0-9])(" + _SHAPES + ")")
_SCRUB = re.compile(r"(?<![A-Za-z0-9])(?:" + _SHAPES + ")")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
REMOVED = "[key removed]"
ADVICE = "put the key in an environment variable and name it with api_key_env (the key then reaches no file)"


def looks_like_key(value: Any) -> bool:
    return isinstance(value, str) and bool(KEY_SHAPES.search(value))


def mask(value: str) -> str:
    """A key as an error message may show it: its first three characters and its length."""
    return f"{value[:3]}… ({len(value)} characters, masked)"


def scrub(text: str) -> str:
    """``text`` with every key-shaped substring replaced by ``[key removed]`` (module doc)."""
    return _SCRUB.sub(REMOVED, text) if text else text


def scrub_bytes(data: bytes) -> bytes:
    """:func:`scrub` of UTF-8 bytes (bytes that are not UTF-8 text are returned unchanged)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    out = scrub(text)
    return data if out == text else out.encode("utf-8")


def find_key(doc: Any, path: str = "") -> tuple[str, str] | None:
    """``(dotted field, value)`` of the first key-shaped string in a parsed YAML/JSON document, or None."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if looks_like_key(str(k)):
                return (path or str(k)), str(k)
            found = find_key(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    elif isinstance(doc, (list, tuple)):
        for i, v in enumerate(doc):
            found = find_key(v, f"{path}[{i}]")
            if found:
                return found
    elif looks_like_key(doc):
        return path, doc
    return None


def env_name_problem(value: str | None) -> str | None:
    """Why ``value`` cannot be the *name* of the environment variable holding a key (``api_key_env``), or None."""
    if value is None:
        return None
    if looks_like_key(value) or not ENV_NAME.match(value):
        shown = mask(value) if looks_like_key(value) or len(value) > 12 else repr(value)
        return (f"api_key_env names the environment variable that holds the key, not the key itself; got {shown}. "
                f"Put the key in a variable (export OPENAI_API_KEY=…) and write its name here")
    return None


def url_problem(url: str | None) -> str | None:
    """Why ``url`` carries a credential (query parameter named like one, or a key-shaped value), or None."""
    if not url:
        return None
    parsed = urlparse(url)
    for name, value in parse_qsl(parsed.query, keep_blank_values=True):
        if value and (SECRET_NAMES.match(name) or looks_like_key(value)):
            return f"the URL's query string carries a credential ({name}=…); {ADVICE}"
    if looks_like_key(parsed.path) or looks_like_key(parsed.fragment):
        return f"the URL carries a key-shaped value; {ADVICE}"
    return None


def body_problem(body: Any, path: str = "") -> tuple[str, str] | None:
    """``(dotted field, reason)`` of the first credential in a free-form request mapping, or None."""
    if isinstance(body, dict):
        for k, v in body.items():
            here = f"{path}.{k}" if path else str(k)
            if SECRET_NAMES.match(str(k)) and isinstance(v, str) and v.strip():
                return here, f"a credential in a request field ({k}: …) would be written to the manifest and the cache; {ADVICE}"
            found = body_problem(v, here)
            if found:
                return found
    elif isinstance(body, (list, tuple)):
        for i, v in enumerate(body):
            found = body_problem(v, f"{path}[{i}]")
            if found:
                return found
    elif looks_like_key(body):
        return path, f"a key-shaped value in a request field would be written to the manifest and the cache; {ADVICE}"
    return None


class _ScrubbedStream:
    """A text stream that writes through :func:`scrub` (every other attribute is the wrapped stream's)."""

    def __init__(self, inner):
        self._inner = inner

    def write(self, s):
        return self._inner.write(scrub(s) if isinstance(s, str) else s)

    def writelines(self, lines):
        for s in lines:
            self.write(s)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def scrub_streams() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` so that every line lcrag prints or logs is scrubbed (idempotent)."""
    import sys

    for name in ("stdout", "stderr"):
        s = getattr(sys, name)
        if s is not None and not isinstance(s, _ScrubbedStream):
            setattr(sys, name, _ScrubbedStream(s))
