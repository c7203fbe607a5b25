"""The built-in study spec ``longeval`` (``specs/longeval.yaml``), registered with the engine.

The YAML is the spec a user copies (``lcrag studies spec longeval``), edits and runs
(``lcrag run my_longeval.yaml``): item source ``longeval``, task builder ``longeval``, reader
``longeval-extractive`` (the deterministic extractive generator), the LongEval measures and views.
It is registered as kind ``study`` when :mod:`lcrag.studies.longeval_study` is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


SPEC_PATH = Path(__file__).parent / "specs" / "longeval.yaml"


def spec_doc() -> dict[str, Any]:
    """The spec as a plain mapping (the YAML file's content)."""
    return yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))


def register_spec() -> bool:
    """Register the ``longeval`` study (the spec file, validated as a ``StudySpec``)."""
    from ..experiment.spec import register_spec_file

    register_spec_file(SPEC_PATH)
    return True
