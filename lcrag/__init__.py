"""lcrag: is the bottleneck retrieving the evidence or reading it?

Build long-context (LC) and retrieval (RAG) versions of the same questions, make models
answer with cited evidence lines, score answer and evidence separately and jointly, and
regenerate the tables and figures of the two source papers.

The public API is the names in ``__all__``, importable from ``lcrag`` directly::

    from lcrag import Chunk, Document, register_chunker, chunks_from_spans

    def halves(doc: Document, **params) -> list[Chunk]:
        mid = len(doc.text) // 2
        return chunks_from_spans(doc, [(0, mid), (mid, len(doc.text))], "halves")

    register_chunker("halves", halves)

Names are resolved on first use (module ``__getattr__``), so ``import lcrag`` stays cheap: it
loads only the registry table and the version. Anything not listed here is internal and may
change; modules whose names start with ``_`` are private to their package. A study's own views are not
here: each study folder is its front door (``from lcrag.studies import nolima; nolima.fig11_table(...)``).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import registry as _registry
from .version import __version__  # noqa: F401  (lcrag.__version__)

#: public name -> "module:attribute" it is resolved from
_API: dict[str, str] = {
    # typed records (lcrag.types): conventions are in each record's docstring
    "Document": "lcrag.types:Document",
    "Line": "lcrag.types:Line",
    "Chunk": "lcrag.types:Chunk",
    "Evidence": "lcrag.types:Evidence",
    "Item": "lcrag.types:Item",
    "Context": "lcrag.types:Context",
    "Condition": "lcrag.types:Condition",
    "Response": "lcrag.types:Response",
    "ResultRow": "lcrag.types:ResultRow",
    # the registry: built-in and plug-in components by name
    "register": "lcrag.registry:register",
    "lookup": "lcrag.registry:lookup",
    "names": "lcrag.registry:names",
    "register_retriever": "lcrag.registry:register_retriever",
    "register_chunker": "lcrag.registry:register_chunker",
    "register_reader": "lcrag.registry:register_reader",
    "load_plugins": "lcrag.registry:load_plugins",
    # building blocks for plug-ins
    "chunks_from_spans": "lcrag.chunking.spans:chunks_from_spans",
    "Retriever": "lcrag.retrieval.base:Retriever",
    "Reader": "lcrag.llm.readers:Reader",
    "ReadRequest": "lcrag.llm.readers:ReadRequest",
    "CallResult": "lcrag.llm.client:CallResult",
    "make_reader": "lcrag.llm.readers:make_reader",
    # running tasks through the one cached reader path, and measuring the responses
    "Task": "lcrag.runner:Task",
    "run_tasks": "lcrag.runner:run_tasks",
    "measure": "lcrag.measures:measure",
    "Measure": "lcrag.measures:Measure",
    # the experiment engine: built-in paper studies and a user's study file, one code path
    "run": "lcrag.experiment.engine:run",
    "load_spec": "lcrag.experiment.engine:load_spec",
    "builtin_names": "lcrag.experiment.engine:builtin_names",
    "spec_yaml": "lcrag.experiment.engine:spec_yaml",
    "view": "lcrag.experiment.engine:view",
    "StudySpec": "lcrag.experiment.spec:StudySpec",
    "StudyResult": "lcrag.experiment.engine:StudyResult",
    # where the external data lives (LCRAG_DATA_DIR)
    "data_dir": "lcrag.config:data_dir",
    # what the notebooks use besides their study folder's front door (``from lcrag.studies import nolima`` then
    # ``nolima.fig11_table(...)``; lcrag.studies.frontdoor): saving, reports, plots, usage
    "save_figure": "lcrag.outputs.save:save_figure",
    "save_table": "lcrag.outputs.save:save_table",
    "usage_table": "lcrag.outputs.usage:usage_table",
    "make_report": "lcrag.outputs.report:make_report",
    # a run in a notebook: the run object, its item views, breakdowns and comparisons
    "open_run": "lcrag.outputs.runview:open_run",
    "Run": "lcrag.outputs.runview:Run",
    "compare_runs": "lcrag.outputs.runview:compare_runs",
    "file_names": "lcrag.outputs.report:file_names",
    "heatmap_figure": "lcrag.outputs.report:heatmap_figure",
    "write_example": "lcrag.experiment.example:write_example",
    "EXAMPLE_LABEL": "lcrag.experiment.example:EXAMPLE_LABEL",
    # public modules (a name without ":" is the module itself)
    "experiment": "lcrag.experiment",
    "plots": "lcrag.outputs.plots",
    "views": "lcrag.outputs.views",
}

__all__ = [
    "CallResult", "Chunk", "Condition", "Context", "Document", "Evidence", "Item", "Line", "Measure",
    "ReadRequest", "Reader", "Response", "ResultRow", "Retriever", "Task", "chunks_from_spans", "data_dir",
    "load_plugins", "lookup", "make_reader", "measure", "names", "register", "register_chunker", "register_reader",
    "register_retriever", "run_tasks",
    "StudyResult", "StudySpec", "builtin_names", "load_spec", "run", "spec_yaml", "view",
    "Run", "compare_runs", "open_run",
    "EXAMPLE_LABEL", "file_names", "heatmap_figure", "make_report", "save_figure", "save_table", "usage_table",
    "write_example",
    "experiment", "plots", "views",
]


def __getattr__(name: str) -> Any:
    try:
        target = _API[name]
    except KeyError:
        raise AttributeError(f"module 'lcrag' has no attribute {name!r}") from None
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr) if attr else importlib.import_module(module)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})


def _register_builtins() -> None:
    """The registry's loader for lcrag's own components: reader kinds (bound to the table
    ``lcrag.llm.readers.make_reader`` reads) and the built-in measures, retrievers and chunkers."""
    from .experiment.builtins import register_builtins
    from .llm.readers import Reader, reader_kinds

    _registry.bind_readers(reader_kinds(), Reader)
    register_builtins()


_registry.add_loader(_register_builtins)
