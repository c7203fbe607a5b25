"""Study discovery for the engine: loading a study folder registers its study.

Loading a folder (:func:`lcrag.studyfolders.folders`: ``lcrag/studies/*/`` and ``LCRAG_STUDIES_PATH``) imports,
when present, its ``measures.py`` (measures it registers), then its ``study.py`` (item source, task builder,
views it registers with :mod:`lcrag.registry`), then registers every ``*.yaml`` in the folder as a study spec
(:func:`.spec.register_spec_file`) except the paper's values (``paper.yaml``) and the folder's declaration
(``benchmark.yaml``, :func:`lcrag.studyfolders.declaration`).
Study modules are found by walking folders, never through a list of names,
so adding a benchmark is adding a folder.
"""

from __future__ import annotations

from ..studyfolders import DECLARATION_FILE, PAPER_VALUES_FILE, StudyFolder, folders, import_part

#: the parts a folder's load imports, in this order
LOAD_PARTS = ("measures", "study")
#: a folder's YAML that is not a study spec: the paper's values (read by :mod:`lcrag.outputs.scoreboard` only) and the
#: folder's declaration of what it is
NOT_SPECS = (PAPER_VALUES_FILE, DECLARATION_FILE)


def load(folder: StudyFolder) -> None:
    """Register the folder's study: import its :data:`LOAD_PARTS`, then register its ``*.yaml`` specs."""
    from .spec import register_spec_file

    for part in LOAD_PARTS:
        import_part(folder, part)
    for y in sorted(folder.path.glob("*.yaml")):
        if y.name not in NOT_SPECS:
            register_spec_file(y)


_LOADED: set[str] = set()


def load_all() -> None:
    """Load every study folder once (a folder added to ``LCRAG_STUDIES_PATH`` later loads on the next call)."""
    for f in folders():
        if f.package not in _LOADED:
            _LOADED.add(f.package)
            load(f)
