"""Built-in benchmarks expressed in the custom item schema (:mod:`.schema`).

Each converter returns ``(corpus documents, items)`` as schema dicts; :func:`write_study_data`
writes them as ``corpus.jsonl`` + ``items.jsonl`` for ``lcrag run``. What carries over and
what does not:

* :func:`from_synthetic` (EBG §4.1): pool facts grouped ``facts_per_doc`` to a document, each
  needle fact its own document, evidence = the two needle documents' whole text. With
  ``facts_per_doc=1``, ``lc.headers: false`` and ``lc.placement: shuffle`` the LC haystack is
  the paper's construction up to the order of the RNG draws.
* :func:`lcrag.studies.multihop_convert.from_multihop_rag` (EBG App. D, README §3.4/§6.3; it lives with the
  MultiHop-RAG study, whose context builders it uses): articles as documents (id = title),
  each usable query's document set = its gold articles + 20 seeded distractors in the pilot's
  order (:func:`lcrag.studies.multihop_contexts.build_lc_records`); a fact becomes a sentence
  evidence when it occurs verbatim, else the span of the sentence the §6.3 prefix rule finds
  in its own article; queries with a fact found nowhere in its article are skipped.
* :func:`from_qasper` (QASPER dev): one document per paper (abstract, then one paragraph per
  line); answerable questions with text evidence; answers = the distinct reference answers;
  evidence = the evidence paragraphs of the first annotator that has any.
* :func:`from_nolima` (EBG §4.2): the haystack cut into documents of ``lines_per_doc`` lines and
  one needle document per needle group; evidence = the needle; answer = the character. Use
  ``lc.placement: depth``. NoLiMa text keeps its Adobe Research License (``metadata.license``).

LongEval-RAG is not converted: its official gold is a pair of relevant papers per query
(inferred, not released) and a free-text answer, with no evidence spans to score lines against.
"""

from __future__ import annotations

from pathlib import Path

from ..chunking.sentences import split_sentences
from .schema import locate_sentence, write_jsonl


def _doc(id_: str, text: str, title: str = "", **meta) -> dict:
    return {"id": id_, "title": title, "text": text, "metadata": meta}


def _whole(doc: dict, label: str = "") -> dict:
    return {"doc_id": doc["id"], "start": 0, "end": len(doc["text"]), "label": label}


def from_synthetic(needles: str = "lcrag", *, pool_size: int = 2000, facts_per_doc: int = 20, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """lcrag's synthetic two-hop benchmark (``lcrag.data.synthetic``) in the custom schema."""
    from ..data.synthetic import default_pool, needles as needle_set

    pool = default_pool(pool_size, seed)
    docs = [_doc(f"pool-{i // facts_per_doc:05d}", "\n".join(pool[i:i + facts_per_doc]), source="synthetic pool")
            for i in range(0, len(pool), facts_per_doc)]
    pool_ids = [d["id"] for d in docs]
    items = []
    for n in needle_set(needles):
        nd = [_doc(f"needle-{n.id}-{j + 1}", f, source=n.source) for j, f in enumerate(n.facts)]
        docs += nd
        items.append({"id": n.id, "question": n.question, "answers": list(n.answers), "doc_ids": pool_ids + [d["id"] for d in nd],
                      "evidence": [_whole(d, f"fact{j + 1}") for j, d in enumerate(nd)], "metadata": {"source": n.source}})
    return docs, items


def from_qasper(path: str | Path, *, limit: int | None = None) -> tuple[list[dict], list[dict]]:
    """QASPER dev (official JSON) in the custom schema (see module doc)."""
    from ..data.qasper import load_qasper

    papers, questions = load_qasper(path)
    docs, items, used = [], [], set()
    for q in questions:
        refs = [r for r in q.references if r.type != "none"]
        evid = next((r.evidence for r in refs if r.evidence), ())
        p = papers[q.paper_id]
        text = "\n".join([p.abstract, *(t for _, _, t in p.paragraphs())])
        units = [e for e in evid if e.strip() and locate_sentence(text, e) is not None]
        if not refs or not units:
            continue
        if q.paper_id not in used:
            used.add(q.paper_id)
            docs.append(_doc(q.paper_id, text, p.title))
        items.append({"id": q.question_id, "question": q.question, "answers": list(dict.fromkeys(r.answer for r in refs)),
                      "doc_ids": [q.paper_id], "evidence": [{"doc_id": q.paper_id, "text": e} for e in units],
                      "metadata": {"answer_type": q.answer_type}})
        if limit is not None and len(items) >= limit:
            break
    return docs, items


def from_nolima(length: int = 10_000, *, hop: str = "onehop", lines_per_doc: int = 20, groups=None, data_dir=None,
                generated: bool | None = None) -> tuple[list[dict], list[dict]]:
    """NoLiMa single-needle groups over one haystack length in the custom schema (see module doc).

    Each group uses test ``T01_C02`` when it has it, else its first test; ``groups`` restricts
    the groups (e.g. ``lcrag.data.nolima.PAPER_NEEDLES``).
    """
    from ..data.nolima import DEFAULT_TEST, LICENSE_NOTE, load_nolima

    data = load_nolima(data_dir, generated=generated)
    lic = LICENSE_NOTE if data.source == "data" else data.note
    hay = data.haystack(length)
    docs = [_doc(f"hay-{i // lines_per_doc:04d}", "\n".join(hay[i:i + lines_per_doc]), license=lic)
            for i in range(0, len(hay), lines_per_doc)]
    hay_ids = [d["id"] for d in docs]
    items = []
    for gid, g in sorted(data.needles.items()):
        if groups is not None and gid not in set(groups):
            continue
        needle, qs, char = g.fill(DEFAULT_TEST if DEFAULT_TEST in g.tests else sorted(g.tests)[0])
        if hop not in qs:
            continue
        nd = _doc(f"needle-{gid}", needle, license=lic)
        if not split_sentences(needle):
            continue
        docs.append(nd)
        items.append({"id": f"{gid}-{hop}", "question": qs[hop], "answers": [char], "doc_ids": hay_ids + [nd["id"]],
                      "evidence": [_whole(nd, "needle")], "metadata": {"group": gid, "hop": hop, "source": data.source,
                                                                         "license": lic}})
    return docs, items


def write_study_data(out_dir: str | Path, docs: list[dict], items: list[dict]) -> dict[str, Path]:
    """Write ``corpus.jsonl`` and ``items.jsonl`` to ``out_dir``."""
    out = Path(out_dir)
    return {"corpus": write_jsonl(out / "corpus.jsonl", docs), "items": write_jsonl(out / "items.jsonl", items)}
