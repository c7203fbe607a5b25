"""papermill for ``lcrag reproduce``'s own processes, without an import-time grammar they never use.

papermill imports nbformat, which imports jsonschema, whose format checkers import the optional
``rfc3987_syntax`` when it is installed (jupyter's ``jsonschema[format-nongpl]`` extra installs it);
that module builds a Lark grammar for RFC 3987 IRIs at import: 1.6 of papermill's 2.3 s of import
time on a 2-core EPYC (``python -X importtime -c "import papermill"``), paid by the ``lcrag
reproduce`` process (it inspects every notebook's parameters) and by each of its ``--jobs``
workers, at start-up, before any notebook runs. Notebook validation (nbformat's schema) checks no
``iri`` format, so :func:`papermill` imports papermill with ``rfc3987_syntax`` marked absent in
``sys.modules``: jsonschema then skips only its ``iri`` / ``iri-reference`` checkers, as it does
where the package is not installed. Nothing changes in a process that has imported jsonschema
already, and notebook kernels (processes of their own) are not affected.
"""

from __future__ import annotations

import sys

SKIPPED = "rfc3987_syntax"


def papermill():
    """The ``papermill`` module, imported (once per process) without jsonschema's IRI grammar."""
    if "papermill" in sys.modules:
        return sys.modules["papermill"]
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault(SKIPPED, None)  # ``import rfc3987_syntax`` now raises ImportError
    import papermill as pm

    return pm
