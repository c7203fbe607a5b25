"""The experiment engine: your own study and every built-in paper study, one code path.

* :mod:`.spec` — the study spec (YAML / dict, pydantic), validated before any work;
* :mod:`.engine` — :func:`run` (spec -> items -> tasks -> reader calls -> scored rows -> views),
  :func:`load_spec`, :func:`builtin_names`, :func:`spec_yaml`;
* :mod:`.discover` — study discovery: one folder of ``lcrag/studies/`` (or ``LCRAG_STUDIES_PATH``) per study;
* :mod:`.schema` — the item schema (JSONL) and its validating loader;
* :mod:`.convert` — the built-in benchmarks expressed in that schema;
* :mod:`.example` — a small generated example corpus with two-hop questions;
* :mod:`.config` — the own-study fields of the spec;
* :mod:`lcrag.contexts.render` — LC haystacks and RAG contexts with gold lines from evidence spans;
* :mod:`lcrag.contexts.layouts` — RAG chunk orders (score, document, reverse, both ends) and LC fillers (shuffled, masked);
* :mod:`.route` — Self-Route rows (RAG, LC on abstention) composed from the two conditions' rows;
* :mod:`.study` — validation, task building, runs and records (``lcrag run``);
* :mod:`lcrag.outputs.report` — the standard views of any run (``lcrag report``).

Extension points are in :mod:`lcrag.registry`; the flow is drawn in ``docs/architecture.md``.
"""

from .engine import StudyResult, builtin_names, load_spec, run, spec_yaml, view
from .spec import StudySpec

__all__ = ["run", "load_spec", "builtin_names", "spec_yaml", "view", "StudyResult", "StudySpec"]
