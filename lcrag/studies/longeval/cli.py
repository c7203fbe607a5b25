"""``lcrag longeval run|validate|score``: the LongEval-RAG candidate-constrained pipeline (the study folder's CLI,
added to ``lcrag`` by the study discovery).

* ``lcrag longeval run --variant NAME [--variant ...] [--queries all|fulltext|ID,...] [--reader PROFILE] --out DIR``
  runs variants of ``longeval_variants.yaml`` (the folder's built-in or a user override) (the extractive generator, reader
  ``longeval-extractive``, unless ``--reader``) on the recovered corpus (or
  ``--queries-file``/``--documents`` for your own files) through the engine's pieces of the
  ``longeval`` study (item source, task builder, :func:`lcrag.runner.run_tasks`: one cached
  reader path, resumable rows in ``DIR/results.jsonl``) and writes TREC-RAG JSONL + provenance
  sidecars per variant.
* ``lcrag longeval validate RUN.jsonl [--queries-file Q]`` checks the candidate constraint and
  citation indices (exit 1 on errors).
* ``lcrag longeval judge RUN.jsonl [...] --silver PROFILE --judge PROFILE [--nuggets PROFILE] [--human CSV]
  [--budget USD] [--out DIR]`` runs lcrag's supplementary protocol over the runs' answers
  (:mod:`lcrag.studies.longeval.judging`: silver reference, 1-5 judge, citation overlap, nuggets; cached) and
  prints the per-variant table labelled as lcrag's protocol (with agreement and the PPI estimate given ``--human``).
* ``lcrag longeval score RUN.jsonl`` prints mean ROUGE-L (organizer rule) and citation precision
  (inferred gold pairs; derived, not official) against the shared data directory.
"""

from __future__ import annotations

import argparse


def _cmd_run(args) -> int:
    from pathlib import Path

    from ...llm.readers import make_reader
    from ...results import to_frame
    from ...runner import run_tasks
    from . import study as le

    le.select_variants(args.variant, args.variants_file)  # unknown names fail before any run is written
    if args.queries in ("all", "fulltext"):
        queries = args.queries
    else:
        queries = args.queries.split(",")
    items = le.longeval_items(data_dir=args.data_dir, queries=queries, queries_file=args.queries_file, documents=args.documents)
    tasks = le.build_tasks(items, variants=args.variant, variants_file=args.variants_file)
    reader = make_reader(args.reader or le.EXTRACTIVE_READER)
    out = Path(args.out)
    rows = run_tasks(tasks, reader, run="longeval", results_path=out / "results.jsonl", scorer=le.longeval_scorer(),
                     progress=False)
    frame = to_frame(rows)
    paths = dict(zip(le.responses_from_frame(frame), le.write_runs(frame, out)))
    summary = le.summary_view(frame)
    bad = 0
    for s in summary.to_dict("records"):
        bad += s["validator"] != "pass" or s["untraced citations"] > 0
        print(f"{s['variant']}: {s['n']} responses -> {paths[s['variant']]} | validator {s['validator']} | "
              f"untraced citations {s['untraced citations']} | generator: {reader.label}")
    return 1 if bad else 0


def _cmd_validate(args) -> int:
    from ...config import data_dir
    from .data import QUERIES_REL, load_queries
    from ...formats.trec_rag import read_run, validate_run

    qfile = args.queries_file or data_dir(args.data_dir) / QUERIES_REL
    cands = {q.id: q.doc_ids for q in load_queries(qfile)}
    rep = validate_run(read_run(args.run, allow_empty=False), cands, require_all_queries=args.require_all)
    for i in rep.issues:
        print(f"{i.severity}: {i.query_id} {i.kind}: {i.message}")
    print(f"{rep.n_responses} responses, {len(rep.errors)} error(s): {'pass' if rep.ok else 'FAIL'}")
    return 0 if rep.ok else 1


def _cmd_score(args) -> int:
    from .data import load_gold_answers
    from ...scoring.citations import response_citation_precision
    from ...scoring.text import answer_text, rouge_l_f1
    from .stored import inferred_gold_pairs
    from ...formats.trec_rag import iter_run

    # one streamed pass, linear in the run: ROUGE-L of every answered gold query, and citation precision as
    # lcrag.scoring.citations.run_citation_precision takes it (the last response of a query counts; the mean
    # is over the answered queries that have an inferred gold pair, first consistent pair: the one rule)
    gold = load_gold_answers(args.data_dir)
    first_pair = {q: p[0] for q, p in inferred_gold_pairs(args.data_dir).items()}
    rouge: list[float] = []
    per_query: dict[str, float] = {}
    for r in iter_run(args.run, allow_empty=False):
        if r.query_id in gold:
            rouge.append(rouge_l_f1(answer_text(r.answer), gold[r.query_id]))
        nid = str(r.metadata.get("narrative_id", ""))  # the key run_citation_precision reads
        if nid in first_pair:
            per_query[nid] = response_citation_precision(r, first_pair[nid])
    prec = sum(per_query.values()) / len(per_query) if per_query else 0.0
    print(f"queries scored: {len(rouge)} | ROUGE-L F1: {sum(rouge) / max(1, len(rouge)):.4f} | "
          f"citation precision (inferred gold pairs, first consistent pair): {prec:.4f}")
    return 0


def _cmd_judge(args) -> int:
    from .judging import LABEL, judge_runs

    _, table = judge_runs(args.runs, silver=args.silver, judge=args.judge, nugget_reader=args.nuggets,
                          data_dir=args.data_dir, budget_usd=args.budget, human=args.human, out_dir=args.out,
                          queries_file=args.queries_file, documents=args.documents)
    print(f"[lcrag] {LABEL}")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("longeval", help="LongEval-RAG pipeline: run variants, validate and score TREC-RAG runs")
    sub = p.add_subparsers(dest="longeval_cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=None, help="data directory (default: $LCRAG_DATA_DIR or ../shared/data)")
    common.add_argument("--queries-file", default=None, help="query JSONL (default: the official file in the data directory)")
    r = sub.add_parser("run", parents=[common], help="run variants and write TREC-RAG JSONL + provenance")
    r.add_argument("--variant", action="append", help="variant name (repeatable; default: all ten)")
    r.add_argument("--variants-file", default=None, help="variants YAML (default: the built-in longeval_variants.yaml, or the file of that name in $LCRAG_PARAMS_DIR/ or params/)")
    r.add_argument("--queries", default="fulltext", help="all | fulltext (the 11 with recovered text) | comma-separated ids")
    r.add_argument("--documents", default=None, help="documents file or directory (with --queries-file)")
    r.add_argument("--reader", default=None, help="reader profile for LLM generation (default: extractive generator)")
    r.add_argument("--out", required=True, help="output directory")
    r.set_defaults(func=_cmd_run)
    v = sub.add_parser("validate", parents=[common], help="validate a TREC-RAG run against the candidate sets")
    v.add_argument("run")
    v.add_argument("--require-all", action="store_true", help="every query must be answered")
    v.set_defaults(func=_cmd_validate)
    s = sub.add_parser("score", parents=[common], help="ROUGE-L and citation precision of a run")
    s.add_argument("run")
    s.set_defaults(func=_cmd_score)
    j = sub.add_parser("judge", parents=[common], help="lcrag's supplementary protocol (silver reference, 1-5 judge, "
                                                       "nuggets) over TREC-RAG runs")
    j.add_argument("runs", nargs="+", help="TREC-RAG run files (variant = file name)")
    j.add_argument("--silver", default="gpt-5.4-mini", help="reader profile writing the silver references (the paper: GPT-5.4-mini)")
    j.add_argument("--judge", default="sonnet-4.5", help="reader profile of the 1-5 judge (the paper: Sonnet-4.5)")
    j.add_argument("--documents", default=None, help="documents file or directory (with --queries-file)")
    j.add_argument("--nuggets", default=None, help="reader profile of the nugget evaluation (default: not run)")
    j.add_argument("--human", default=None, help="CSV item_id,human (item_id = <variant>/<query id>) for agreement and PPI")
    j.add_argument("--budget", type=float, default=None, help="spending cap in USD over all uncached calls")
    j.add_argument("--out", default=None, help="directory for longeval_judge_rows.csv and longeval_judge_table.csv")
    j.set_defaults(func=_cmd_judge)
