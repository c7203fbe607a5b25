"""MultiHop-RAG (EBG App. D) converted to the own-study item schema, so ``lcrag run`` can run a user's
study on the official MultiHop-RAG files (:func:`from_multihop_rag`)."""

from __future__ import annotations

from pathlib import Path

from ...experiment.schema import locate_sentence


def from_multihop_rag(corpus_path: str | Path, queries_path: str | Path, *, n_distractors: int = 20, seed: int = 0,
                      limit: int | None = None) -> tuple[list[dict], list[dict]]:
    """MultiHop-RAG (official schema files) in the own-study item schema (:mod:`lcrag.experiment.schema`):
    articles as documents (id = title); each usable query's document set = its gold articles + 20
    seeded distractors in the pilot's order (:func:`.contexts.build_lc_records`); a fact
    becomes a sentence evidence when it occurs verbatim, else the span of the sentence the §6.3
    prefix rule finds in its own article; queries with a fact found nowhere in its article are
    skipped. Returns ``(corpus documents, items)`` as schema dicts
    (:func:`lcrag.experiment.convert.write_study_data` writes them)."""
    from .data import load_corpus, load_queries
    from .contexts import build_lc_records, locate_fact, render, sentence_rows

    corpus = load_corpus(corpus_path)
    by_id = {d.id: d for d in corpus}
    records, _ = build_lc_records(corpus, load_queries(queries_path), n_distractors=n_distractors, seed=seed)
    items = []
    for rec in records:
        ev = []
        for f in rec.query.facts:
            doc = by_id.get(f.title)
            if doc is None:
                break
            if locate_sentence(doc.text, f.fact) is not None:
                ev.append({"doc_id": doc.id, "text": f.fact})
                continue
            lines = render(sentence_rows(doc.text, doc.id)).lines
            n = locate_fact(f.fact, lines)
            if n is None:
                break
            ln = lines[n]
            ev.append({"doc_id": doc.id, "start": ln.start, "end": ln.end})
        else:
            q = rec.query
            items.append({"id": f"q{q.qid}", "question": q.query, "answers": [q.answer], "doc_ids": list(rec.titles),
                          "evidence": ev, "metadata": {"qid": q.qid, "question_type": q.question_type, "seed": rec.seed}})
        if limit is not None and len(items) >= limit:
            break
    used = {d for it in items for d in it["doc_ids"]}
    docs = [{"id": d.id, "title": d.title, "text": d.text, "metadata": {k: v for k, v in d.metadata.items() if k != "index"}}
            for d in corpus if d.id in used]
    return docs, items
