"""The ten LongEval-RAG variants (LongEval-RAG paper Table 4) as named parameter sets from YAML.

``longeval_variants.yaml`` (package data of this folder, :mod:`.resources`; a file of that name in
``$LCRAG_PARAMS_DIR/`` or the checkout's ``params/`` overrides it) holds ``defaults`` (Table 3 constants) and ``variants``
(per-variant switches). :func:`load_variants` validates them; :func:`method_matrix` derives
Table 4 from the switches, so the table cannot drift from what the pipeline runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import ConfigError
from ...files.textio import read_yaml

from .resources import VARIANTS_FILE, locate
CHUNKINGS = ("rule", "semantic", "topic_shift")
RETRIEVALS = ("concat", "bm25", "rrf")


@dataclass(frozen=True)
class Variant:
    """One pipeline variant: switches plus the shared constants in ``params``."""

    name: str
    chunking: str = "rule"
    retrieval: str = "rrf"
    query_expansion: bool = False
    prf: bool = False
    rerank: bool = False
    citation_prior: bool = False
    sentence_rerank: bool = False
    role: str = ""
    params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def p(self, key: str) -> Any:
        """A constant of this variant (``KeyError`` names the missing key)."""
        if key not in self.params:
            raise KeyError(f"variant {self.name!r} has no parameter {key!r}")
        return self.params[key]


_SWITCHES = {f.name for f in fields(Variant)} - {"name", "params"}


def load_variants(path: str | Path | None = None, **overrides: Any) -> dict[str, Variant]:
    """Variants by name, in file order; ``overrides`` replace constants of every variant."""
    from ...files.yamlpos import node_line as _node_line

    path = Path(path) if path else locate(VARIANTS_FILE)
    from ... import provenance

    provenance.note(f"lcrag's parameter file {path.name} (method definitions, no data)")
    data, text = read_yaml(path)
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(path, "expected a mapping with 'defaults' and 'variants'")
    for key in ("defaults", "variants"):
        if not isinstance(data.get(key) or {}, dict):
            raise ConfigError(path, "expected a mapping", line=_node_line(text, key), field=key)
    defaults = dict(data.get("defaults") or {})
    defaults.update(overrides)
    out: dict[str, Variant] = {}
    for name, spec in (data.get("variants") or {}).items():
        where = f"variants.{name}"
        if not isinstance(spec or {}, dict):
            raise ConfigError(path, "expected a mapping of switches", line=_node_line(text, where), field=where)
        spec = dict(spec or {})
        unknown = set(spec) - _SWITCHES
        if unknown:
            raise ConfigError(path, f"unknown switch(es) {sorted(unknown)}", line=_node_line(text, where), field=where)
        for key, val in spec.items():
            want = bool if key not in ("chunking", "retrieval", "role") else str
            if not isinstance(val, want):
                raise ConfigError(path, f"must be {'true or false' if want is bool else 'a string'}, got {val!r}",
                                  line=_node_line(text, f"{where}.{key}"), field=f"{where}.{key}")
        v = Variant(name=name, params=dict(defaults), **spec)
        for key, allowed in (("chunking", CHUNKINGS), ("retrieval", RETRIEVALS)):
            if getattr(v, key) not in allowed:
                raise ConfigError(path, f"{key} must be one of {allowed}", line=_node_line(text, f"{where}.{key}"),
                                  field=f"{where}.{key}")
        if v.retrieval != "rrf" and (v.query_expansion or v.prf or v.rerank):
            raise ConfigError(path, "query expansion, PRF and rerank need retrieval: rrf", line=_node_line(text, where),
                              field=where)
        out[name] = v
    if not out:
        raise ConfigError(path, "no variants defined", field="variants")
    return out


def method_matrix(variants: dict[str, Variant]) -> pd.DataFrame:
    """The LongEval-RAG paper's Table 4 derived from the switches (✓ / –)."""
    def mark(b: bool) -> str:
        return "✓" if b else "–"

    rows = []
    for i, v in enumerate(variants.values(), start=1):
        rows.append({
            "No.": i, "Approach": v.name,
            "Rule": mark(v.chunking == "rule"), "Sem.": mark(v.chunking == "semantic"), "Topic": mark(v.chunking == "topic_shift"),
            "BM25": mark(v.retrieval == "bm25"), "QE": mark(v.query_expansion), "PRF": mark(v.prf),
            "RRF": mark(v.retrieval == "rrf"), "RR": mark(v.rerank), "Cit.": mark(v.citation_prior), "Sent.": mark(v.sentence_rerank),
        })
    return pd.DataFrame(rows)


def variant_constants(variants: dict[str, Variant]) -> pd.DataFrame:
    """The shared constants (LongEval-RAG paper Table 3) as ``parameter, value`` rows (values as text), in file order,
    then the chunkers' structural constants (``min_sentences_before_split``,
    :data:`lcrag.chunking.semantic.MIN_SENTENCES_BEFORE_SPLIT`)."""
    from ...chunking.semantic import MIN_SENTENCES_BEFORE_SPLIT

    first = next(iter(variants.values()))
    rows = [{"parameter": k, "value": str(v)} for k, v in first.params.items()]
    if "min_sentences_before_split" not in first.params:
        rows.append({"parameter": "min_sentences_before_split", "value": str(MIN_SENTENCES_BEFORE_SPLIT)})
    return pd.DataFrame(rows)


def variant_roles(variants: dict[str, Variant]) -> pd.DataFrame:
    """Each variant's ``role`` note (why it is in the matrix), in file order."""
    return pd.DataFrame([{"variant": v.name, "role": v.role} for v in variants.values()])
