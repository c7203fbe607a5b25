"""Refusing API keys where lcrag would write them to disk: URLs and free-form request fields.

The only documented path for a key is the environment variable a profile names (``api_key_env``): the key is
read at call time and reaches no file. A key pasted elsewhere — ``base_url: https://host/v1?api_key=sk-…`` or
``extra_body: {api_key: sk-…}`` — would be stored verbatim in ``manifest.json``, in the cache request and in
``lcrag show``'s output, so profile validation refuses it (:func:`url_problem`, :func:`body_problem`), naming
the field and never echoing the value.

What counts as a key: a query parameter or mapping key whose *name* says credential (``api_key``, ``apikey``,
``key``, ``token``, ``access_token``, ``secret``, ``password``, ``authorization``, ``sig``/``signature`` …)
with a non-empty value, or a string *value* shaped like a provider key (``sk-…``, ``sk-ant-…``, ``hf_…``,
``AIza…``, ``ghp_…``, ``xox?-…``, ``Bearer …``) wherever it appears.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlparse

SECRET_NAMES = re.compile(r"^(x[-_])?(api[-_]?key|key|token|access[-_]?token|auth[-_]?token|secret|client[-_]?secret|"
                          r"password|passwd|authorization|auth|sig|signature|bearer|credential|credentials)$", re.I)
KEY_SHAPES = re.compile(r"(^|[^A-Za-z0-9])(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|"
                        r"AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|"
                        r"Bearer\s+[A-Za-z0-9._~+/=-]{16,})")
ADVICE = "put the key in an environment variable and name it with api_key_env (the key then reaches no file)"


def looks_like_key(value: Any) -> bool:
    return isinstance(value, str) and bool(KEY_SHAPES.search(value))


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
