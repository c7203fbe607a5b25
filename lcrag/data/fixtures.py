"""Shared pieces of the generated stand-ins (fixtures) of benchmarks whose data does not ship with lcrag.

Each benchmark's generator lives in its study folder (``lcrag/studies/multihop_rag/fixture.py``,
``lcrag/studies/qasper_mp/fixture.py``), in the benchmark's EXACT official schema. Tests and notebooks use these
small, seeded, deterministic corpora when the real files are absent; anything built from them must be labelled
"generated fixture data, not the real benchmark" (:data:`FIXTURE_LABEL`).
"""

from __future__ import annotations

FIXTURE_LABEL = "generated fixture data, not the real benchmark"

#: person names the generators draw from (authors, quoted people)
FIRST_NAMES = ["Maria", "James", "Aiko", "Ravi", "Elena", "Tomas", "Grace", "Omar", "Lena", "Victor", "Nadia", "Samuel"]
LAST_NAMES = ["Okafor", "Lindqvist", "Tanaka", "Moreau", "Castillo", "Brennan", "Haddad", "Novak", "Whitfield", "Adeyemi",
              "Kowalski", "Ferreira", "Iversen", "Duarte"]
