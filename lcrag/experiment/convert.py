"""Built-in benchmarks expressed in the custom item schema (:mod:`.schema`): the shared pieces.

Each converter lives in its study folder and returns ``(corpus documents, items)`` as schema
dicts; :func:`write_study_data` writes them as ``corpus.jsonl`` + ``items.jsonl`` for ``lcrag run``.
What carries over and what does not:

* :func:`lcrag.studies.synthetic.convert.from_synthetic` (EBG §4.1): pool facts grouped ``facts_per_doc`` to a document, each
  needle fact its own document, evidence = the two needle documents' whole text. With
  ``facts_per_doc=1``, ``lc.headers: false`` and ``lc.placement: shuffle`` the LC haystack is
  the paper's construction up to the order of the RNG draws.
* :func:`lcrag.studies.multihop_rag.convert.from_multihop_rag` (EBG App. D, README §3.4/§6.3; it lives with the
  MultiHop-RAG study, whose context builders it uses): articles as documents (id = title),
  each usable query's document set = its gold articles + 20 seeded distractors in the pilot's
  order (:func:`lcrag.studies.multihop_rag.contexts.build_lc_records`); a fact becomes a sentence
  evidence when it occurs verbatim, else the span of the sentence the §6.3 prefix rule finds
  in its own article; queries with a fact found nowhere in its article are skipped.
* :func:`lcrag.studies.qasper_mp.convert.from_qasper` (QASPER dev): one document per paper (abstract, then one paragraph per
  line); answerable questions with text evidence; answers = the distinct reference answers;
  evidence = the evidence paragraphs of the first annotator that has any.
* :func:`lcrag.studies.nolima.convert.from_nolima` (EBG §4.2): the haystack cut into documents of ``lines_per_doc`` lines and
  one needle document per needle group; evidence = the needle; answer = the character. Use
  ``lc.placement: depth``. NoLiMa text keeps its Adobe Research License (``metadata.license``).

LongEval-RAG is not converted: its official gold is a pair of relevant papers per query
(inferred, not released) and a free-text answer, with no evidence spans to score lines against.
"""

from __future__ import annotations

from pathlib import Path

from .schema import write_jsonl


def schema_doc(id_: str, text: str, title: str = "", **meta) -> dict:
    """One corpus document of the schema (``metadata`` = the keyword fields)."""
    return {"id": id_, "title": title, "text": text, "metadata": meta}


def whole_evidence(doc: dict, label: str = "") -> dict:
    """An evidence span covering the whole text of ``doc`` (characters ``[0, len(text))``)."""
    return {"doc_id": doc["id"], "start": 0, "end": len(doc["text"]), "label": label}


def write_study_data(out_dir: str | Path, docs: list[dict], items: list[dict]) -> dict[str, Path]:
    """Write ``corpus.jsonl`` and ``items.jsonl`` to ``out_dir``."""
    out = Path(out_dir)
    return {"corpus": write_jsonl(out / "corpus.jsonl", docs), "items": write_jsonl(out / "items.jsonl", items)}
