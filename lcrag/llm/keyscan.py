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
* :func:`scrub` (:mod:`lcrag.files.keyshapes`) replaces every key-shaped substring with ``[key removed]``; it is applied
  by every writer of run files and logs: ``write_atomic`` (manifests, ``results.csv``, reports), the results
  writer (``results.jsonl``), the stored reply (``text`` and ``reasoning``, :func:`lcrag.llm.call.record_of`, and
  Batch API replies), and lcrag's standard output and error (the CLI wraps both), so a key that reaches lcrag by
  another road (a document, a model's reply, an exception message) is not written out either. The response
  cache stores *requests* verbatim (the cache key is their hash, and ``cache export`` copies them byte for
  byte); keys reach them only through the fields refused above.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlparse

from pydantic import BaseModel, field_validator

from ..files.keyshapes import KEY_SHAPES, REMOVED, looks_like_key, mask, scrub, scrub_bytes, scrub_streams  # noqa: F401  (re-exported)

SECRET_NAMES = re.compile(r"^(x[-_])?(api[-_]?key|key|token|access[-_]?token|auth[-_]?token|secret|client[-_]?secret|"
                          r"password|passwd|authorization|auth|sig|signature|bearer|credential|credentials)$", re.I)

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

ADVICE = "put the key in an environment variable and name it with api_key_env (the key then reaches no file)"


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


class EndpointChecks(BaseModel):
    """The checks every endpoint profile shares (reader, embedding and rerank profiles subclass it): ``base_url``
    holds no credentials (``user:pass@``) and no key (:func:`url_problem`); ``api_key_env`` is a variable name,
    not a pasted key (:func:`env_name_problem`)."""

    @field_validator("base_url", check_fields=False)
    @classmethod
    def _no_key_in_url(cls, v: str | None) -> str | None:
        if v and "@" in v.split("//", 1)[-1].split("/", 1)[0]:
            raise ValueError("base_url must not contain credentials; put the key in the environment variable named by api_key_env")
        bad = url_problem(v)
        if bad:
            raise ValueError(bad)
        return v

    @field_validator("api_key_env", check_fields=False)
    @classmethod
    def _env_name_not_key(cls, v: str | None) -> str | None:
        bad = env_name_problem(v)
        if bad:
            raise ValueError(bad)
        return v
