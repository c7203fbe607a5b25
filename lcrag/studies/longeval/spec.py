"""The built-in study spec ``longeval`` (``longeval.yaml`` in this folder), registered with the engine.

The YAML is the spec a user copies (``lcrag studies spec longeval``), edits and runs
(``lcrag run my_longeval.yaml``): item source ``longeval``, task builder ``longeval``, reader
``longeval-extractive`` (the deterministic extractive generator), the LongEval measures and views.
It is registered as kind ``study`` by the study discovery (:mod:`lcrag.experiment.discover`), after
:mod:`lcrag.studies.longeval.study` has registered the pieces it names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


SPEC_PATH = Path(__file__).parent / "longeval.yaml"


def spec_doc() -> dict[str, Any]:
    """The spec as a plain mapping (the YAML file's content)."""
    return yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))

