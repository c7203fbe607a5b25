"""The ten LongEval-RAG variants (seed 000 Table 4) as named parameter sets from YAML.

``params/longeval_variants.yaml`` holds ``defaults`` (Table 3 constants) and ``variants``
(per-variant switches). :func:`load_variants` validates them; :func:`method_matrix` derives
Table 4 from the switches, so the table cannot drift from what the pipeline runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ..config import params_dir
from ..errors import ConfigError

VARIANTS_FILE = "longeval_variants.yaml"
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
    path = Path(path) if path else params_dir() / VARIANTS_FILE
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    defaults = dict(data.get("defaults") or {})
    defaults.update(overrides)
    out: dict[str, Variant] = {}
    for name, spec in (data.get("variants") or {}).items():
        spec = dict(spec or {})
        unknown = set(spec) - _SWITCHES
        if unknown:
            raise ConfigError(path, f"unknown switch(es) {sorted(unknown)}", field=f"variants.{name}")
        v = Variant(name=name, params=dict(defaults), **spec)
        if v.chunking not in CHUNKINGS:
            raise ConfigError(path, f"chunking must be one of {CHUNKINGS}", field=f"variants.{name}.chunking")
        if v.retrieval not in RETRIEVALS:
            raise ConfigError(path, f"retrieval must be one of {RETRIEVALS}", field=f"variants.{name}.retrieval")
        if v.retrieval != "rrf" and (v.query_expansion or v.prf or v.rerank):
            raise ConfigError(path, "query expansion, PRF and rerank need retrieval: rrf", field=f"variants.{name}")
        out[name] = v
    if not out:
        raise ConfigError(path, "no variants defined", field="variants")
    return out


def method_matrix(variants: dict[str, Variant]) -> pd.DataFrame:
    """Seed 000 Table 4 derived from the switches (✓ / –)."""
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
