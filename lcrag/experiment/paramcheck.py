"""A chunker's or retriever's parameters checked against the component itself, before any work.

A study names components by registry name with free parameters (``{name: tokens, size: 64}``); a misspelt
name (``sise``), a value of the wrong type (``k1: fast``) or out of range (``size: -5``) must fail when the
study is validated, with the study file, line and field — not as a ``TypeError`` deep inside a sweep.
:func:`check` returns ``(parameter, message)`` of the first problem, or None:

1. **Names** against the real signature (``inspect.signature``) of the function that takes them. A factory
   that forwards ``**params`` to a class names it in ``params_of`` (e.g. the ``bm25`` factory ->
   ``BM25Retriever``), so its accepted names are the class's keyword parameters.
2. **Types** against each parameter's annotation (pydantic's lax validation: ``1`` passes for a float,
   ``"fast"`` does not), else against the type of its default value.
3. **Values**, for a chunker, by cutting a two-sentence probe document with the parameters: the chunker's
   own ``ValueError`` (``size and stride must be positive``) is the message. Chunkers that embed (take
   ``embed``) are not probed (that would load a model); their names and types are still checked.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..types import Document

PROBE = Document(id="probe", title="", text="A probe sentence for parameter checks. A second one follows it.\n")


def _target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The callable whose signature the parameters must fit (``fn.params_of()`` when a factory forwards them)."""
    of = getattr(fn, "params_of", None)
    return of() if callable(of) else fn


def _params(fn: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], bool, dict[str, Any]]:
    """(keyword parameters by name, whether ``**kwargs`` is taken, resolved annotations)."""
    target = _target(fn)
    call = target.__init__ if inspect.isclass(target) else target
    try:
        sig = inspect.signature(call)
    except (TypeError, ValueError):
        return {}, True, {}
    try:
        hints = typing.get_type_hints(call)
    except Exception:  # an annotation that does not resolve: fall back to defaults' types
        hints = {}
    ps = list(sig.parameters.values())
    if inspect.isclass(target) and ps and ps[0].name == "self":
        ps = ps[1:]
    ps = ps[1:] if ps and ps[0].kind in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD) else ps  # doc / chunks
    var_kw = any(p.kind is p.VAR_KEYWORD for p in ps)
    named = {p.name: p for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named, var_kw, hints


def _type_problem(p: inspect.Parameter, hint: Any, value: Any) -> str | None:
    if hint is not None and hint is not Any:
        try:
            TypeAdapter(hint).validate_python(value)
            return None
        except ValidationError as e:
            return e.errors()[0].get("msg", "invalid value")
        except Exception:  # a type pydantic cannot check (a callable, a protocol): accept
            return None
    d = p.default
    if d is p.empty or d is None:
        return None
    if isinstance(d, bool):
        return None if isinstance(value, bool) else "Input should be true or false"
    if isinstance(d, (int, float)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (isinstance(d, float) or isinstance(value, int))
        return None if ok else f"Input should be a {'number' if isinstance(d, float) else 'whole number'}"
    if isinstance(d, str):
        return None if isinstance(value, str) else "Input should be a string"
    return None


def check(kind: str, fn: Callable[..., Any], params: dict[str, Any]) -> tuple[str, str] | None:
    """``(parameter, message)`` of the first bad parameter of a ``kind`` component ``fn``, or None (module doc)."""
    named, var_kw, hints = _params(fn)
    for k, v in params.items():
        if k not in named:
            if var_kw:
                continue
            accepted = ", ".join(sorted(named)) or "none"
            return k, f"unknown parameter {k!r} of this {kind}; accepted: {accepted}"
        msg = _type_problem(named[k], hints.get(k), v)
        if msg:
            return k, f"{msg} (got {v!r})"
    if kind == "chunker" and "embed" not in named:
        try:
            fn(PROBE, **params)
        except (ValueError, TypeError) as e:
            return next(iter(params), "name"), f"the chunker refuses these parameters: {e}"
    return None


def reader_error(e, i: int, study: Any, text: str | None, *, from_cli: bool) -> Exception:
    """The error of the ``i``-th reader entry, told against the file that holds the bad value.

    A profile *file*'s own error (``max_token: 10`` in ``prof.yaml``) already names that file, its line and the
    key: it is returned as is. Otherwise the value is in the study (an inline profile, a ``{profile: NAME, …}``
    override, an unknown reader name) — its line and ``readers[i].<field>`` — or, for ``--readers``, on the
    command line (``--readers[i]``)."""
    from pathlib import Path

    from ..errors import ConfigError
    from ..files.yamlpos import node_line

    src = Path(getattr(e, "path", "") or "")
    if src.is_file() and str(src) != str(study):
        return e
    sub = f".{e.field}" if getattr(e, "field", None) and e.field != "reader" else ""
    if from_cli:
        return ConfigError("--reader", e.reason, field=f"[{i}]{sub}")
    fld = f"readers[{i}]{sub}"
    line = (node_line(text, fld) or node_line(text, f"readers[{i}]")) if text else None
    return ConfigError(study, e.reason, line=line, field=fld)


def choice_problem(fn: Callable[..., Any], params: dict[str, Any]) -> tuple[str, str] | None:
    """``(parameter, message)`` of the first parameter of ``fn`` typed as a choice (``Literal[...]``) whose value in
    ``params`` is none of the choices, or None. The message names the valid choices. Only choices are checked here:
    the function's other parameters keep its own checks."""
    named, _, hints = _params(fn)
    for k, v in params.items():
        hint = hints.get(k) if k in named else None
        if typing.get_origin(hint) is typing.Literal and v not in typing.get_args(hint):
            valid = ", ".join(str(c) for c in typing.get_args(hint))
            return k, f"unknown value {v!r}; valid: {valid}"
    return None


def model_problem(model: Any, params: dict[str, Any]) -> tuple[str, str] | None:
    """``(field, message)`` of the first problem of ``params`` against a component's declared parameter model (a
    pydantic model with ``extra="forbid"``, the component's ``params_model``), or None. An unknown parameter names
    the valid ones; a bad value names its field (``conditions[2]``) and the value given."""
    try:
        model.model_validate(params)
        return None
    except ValidationError as e:
        err = e.errors()[0]
        loc = [str(x) for x in err.get("loc", ())]
        field = (loc[0] + "".join(f"[{x}]" if x.isdigit() else f".{x}" for x in loc[1:])) if loc else "params"
        from ..suggest import did_you_mean

        if err.get("type") == "extra_forbidden":
            hint = did_you_mean(loc[0], model.model_fields)
            return loc[0], f"unknown parameter {loc[0]!r}{hint}; valid: {', '.join(model.model_fields)}"
        hint = ""
        if err.get("type") == "literal_error" and isinstance(err.get("input"), str):
            import re

            hint = did_you_mean(err["input"], re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", ""))))
        return field, f"{err.get('msg', 'invalid value')} (got {err.get('input')!r}){hint}"
