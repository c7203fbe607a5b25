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
change; modules whose names start with ``_`` are private to their package.
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
    # what the notebooks use besides their study folder (lcrag.studies.<name>): saving, reports, plots, usage
    "save_figure": "lcrag.report:save_figure",
    "save_table": "lcrag.report:save_table",
    "usage_table": "lcrag.usage:usage_table",
    "make_report": "lcrag.experiment.report:make_report",
    # a run in a notebook: the run object, its item views, breakdowns and comparisons
    "open_run": "lcrag.experiment.runview:open_run",
    "Run": "lcrag.experiment.runview:Run",
    "compare_runs": "lcrag.experiment.runview:compare_runs",
    "file_names": "lcrag.experiment.report:file_names",
    "heatmap_figure": "lcrag.experiment.report:heatmap_figure",
    "write_example": "lcrag.experiment.example:write_example",
    "EXAMPLE_LABEL": "lcrag.experiment.example:EXAMPLE_LABEL",
    "attribution_bars": "lcrag.plots:attribution_bars",
    "needle_position_curves": "lcrag.plots:needle_position_curves",
    "similarity_bars": "lcrag.plots:similarity_bars",
    "similarity_diff_bars": "lcrag.plots:similarity_diff_bars",
    # public modules (a name without ":" is the module itself)
    "experiment": "lcrag.experiment",
    "plots": "lcrag.plots",
    "views": "lcrag.experiment.views",
    # the synthetic two-hop study (notebook 01; EBG §4.1, Figure 4)
    "synthetic_overrides": "lcrag.studies.synthetic.study:overrides",
    "synthetic_inputs": "lcrag.studies.synthetic.study:inputs_of",
    "check_pool": "lcrag.studies.synthetic.data:check_pool",
    "synthetic_difficulty": "lcrag.studies.synthetic.study:difficulty_rows",
    "synthetic_difficulty_summary": "lcrag.studies.synthetic.difficulty:difficulty_summary",
    "synthetic_rank_figure": "lcrag.studies.synthetic.views:rank_figure",
    "synthetic_heatmaps_figure": "lcrag.studies.synthetic.views:heatmaps_figure",
    "synthetic_joint_figure": "lcrag.studies.synthetic.views:joint_figure",
    "synthetic_conditions_figure": "lcrag.studies.synthetic.views:conditions_hop2_figure",
    "synthetic_rag_pivot": "lcrag.studies.synthetic.views:rag_pivot",
    "synthetic_what_it_shows": "lcrag.studies.synthetic.views:what_it_shows",
    # the NoLiMa studies (notebooks 02-09; EBG §5, App. G)
    "load_nolima": "lcrag.studies.nolima.data:load_nolima",
    "nolima_title": "lcrag.studies.nolima.report:title",
    "nolima_write_notice": "lcrag.studies.nolima.report:write_notice",
    "nolima_attribution": "lcrag.studies.nolima.report:attribution_inputs",
    "nolima_attribution_source": "lcrag.studies.nolima.report:attribution_source",
    "nolima_lexical_overlap": "lcrag.studies.nolima.coverage:lexical_overlap",
    "nolima_coverage_tables": "lcrag.studies.nolima.coverage:all_coverage_tables",
    "nolima_replay_check": "lcrag.studies.nolima.coverage:replay_check",
    "nolima_figure8_tables": "lcrag.studies.nolima.coverage:figure8_tables",
    "nolima_figure8": "lcrag.studies.nolima.coverage:figure8",
    "nolima_coverage_summary": "lcrag.studies.nolima.coverage:coverage_summary",
    "nolima_matched_budget": "lcrag.studies.nolima.coverage:matched_budget_summary",
    "nolima_lc_source": "lcrag.studies.nolima.report:lc_source",
    "nolima_lc_frame": "lcrag.studies.nolima.report:lc_frame",
    "nolima_pp_heatmap": "lcrag.studies.nolima.report:pp_heatmap",
    "nolima_effective_lengths": "lcrag.studies.nolima.report:effective_lengths",
    "nolima_cot_inputs": "lcrag.studies.nolima.report:cot_inputs",
    "nolima_fig1_table": "lcrag.studies.nolima.figures:fig1_table",
    "nolima_fig1_heat": "lcrag.studies.nolima.figures:fig1_heat",
    "nolima_table12": "lcrag.studies.nolima.figures:table12",
    "nolima_table12_flat": "lcrag.studies.nolima.figures:table12_flat",
    "nolima_fig5_tables": "lcrag.studies.nolima.figures:fig5_tables",
    "nolima_fig7_table": "lcrag.studies.nolima.figures:fig7_table",
    "nolima_fig7_heat": "lcrag.studies.nolima.figures:fig7_heat",
    # notebooks 04-08: two-needle citation, TN vs CTN, RAG vs LC, re-ordering, needle similarity
    "nolima_fig2_table": "lcrag.studies.nolima.figures:fig2_table",
    "nolima_fig2_paper_gap": "lcrag.studies.nolima.figures:fig2_paper_gap",
    "nolima_fig3_table": "lcrag.studies.nolima.figures:fig3_table",
    "nolima_paired_bars": "lcrag.studies.nolima.report:paired_bars",
    "nolima_rag_vs_lc": "lcrag.studies.nolima.report:rag_vs_lc_inputs",
    "nolima_fig11_table": "lcrag.studies.nolima.figures:fig11_table",
    "nolima_fig12_table": "lcrag.studies.nolima.figures:fig12_table",
    "nolima_wide": "lcrag.studies.nolima.figures:wide",
    "nolima_ci_labels": "lcrag.studies.nolima.report:ci_labels",
    "nolima_table16": "lcrag.studies.nolima.report:run_table16",
    "nolima_sensitivity": "lcrag.studies.nolima.sensitivity:sensitivity_inputs",
    "nolima_similarity_summary": "lcrag.studies.nolima.sensitivity:similarity_summary",
}

__all__ = [
    "CallResult", "Chunk", "Condition", "Context", "Document", "Evidence", "Item", "Line", "Measure",
    "ReadRequest", "Reader", "Response", "ResultRow", "Retriever", "Task", "chunks_from_spans", "data_dir",
    "load_plugins", "lookup", "make_reader", "measure", "names", "register", "register_chunker", "register_reader",
    "register_retriever", "run_tasks",
    "StudyResult", "StudySpec", "builtin_names", "load_spec", "run", "spec_yaml", "view",
    "Run", "compare_runs", "open_run",
    "EXAMPLE_LABEL", "attribution_bars", "file_names", "heatmap_figure", "make_report", "needle_position_curves",
    "save_figure", "save_table", "similarity_bars", "similarity_diff_bars", "usage_table", "write_example",
    "experiment", "plots", "views",
    "check_pool", "synthetic_conditions_figure", "synthetic_difficulty", "synthetic_difficulty_summary",
    "synthetic_heatmaps_figure", "synthetic_inputs", "synthetic_joint_figure", "synthetic_overrides",
    "synthetic_rag_pivot", "synthetic_rank_figure", "synthetic_what_it_shows", "load_nolima", "nolima_attribution",
    "nolima_attribution_source", "nolima_coverage_summary", "nolima_coverage_tables", "nolima_figure8",
    "nolima_figure8_tables", "nolima_lexical_overlap", "nolima_matched_budget", "nolima_replay_check",
    "nolima_title", "nolima_write_notice", "nolima_cot_inputs", "nolima_effective_lengths", "nolima_fig1_heat",
    "nolima_fig1_table", "nolima_fig5_tables", "nolima_fig7_heat", "nolima_fig7_table", "nolima_lc_frame",
    "nolima_lc_source", "nolima_pp_heatmap", "nolima_table12", "nolima_table12_flat",
    "nolima_ci_labels", "nolima_fig11_table", "nolima_fig12_table", "nolima_fig2_paper_gap", "nolima_fig2_table",
    "nolima_fig3_table", "nolima_paired_bars", "nolima_rag_vs_lc", "nolima_sensitivity", "nolima_similarity_summary",
    "nolima_table16", "nolima_wide",
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
