"""The LongEval study's parameter files, shipped as package data of its folder.

* ``longeval_variants.yaml`` — the ten pipeline variants of the candidate-constrained RAG paper's Table 4
  (``defaults`` are its Table 3 constants), read by :func:`lcrag.studies.longeval.variants.load_variants`;
* ``longeval_prompts.yaml`` — lcrag's generation prompt (the paper's §3.6 contract), read by
  :func:`lcrag.studies.longeval.generate.load_prompt`.

A file of the same name in ``$LCRAG_PARAMS_DIR/`` or in the checkout's ``params/`` overrides the built-in
(:func:`lcrag.resources.locate_file`), so an installed wheel runs the study wherever it is.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ....resources import locate_file

VARIANTS_FILE = "longeval_variants.yaml"
PROMPTS_FILE = "longeval_prompts.yaml"


def locate(name: str) -> Path:
    """The file ``name`` of this folder, or the user's file of that name that overrides it (module doc)."""
    return locate_file(name, resources.files(__name__) / name)


__all__ = ["PROMPTS_FILE", "VARIANTS_FILE", "locate"]
