"""A generated stand-in for QASPER dev v0.3 (data README §5), in its EXACT official schema.

:func:`qasper_records` / :func:`write_qasper`: ``qasper-dev-v0.3.json`` (papers with ``full_text``
sections/paragraphs, ``figures_and_tables`` and ``qas`` whose annotations cover unanswerable, yes/no, extractive
spans and free-form answers, evidence paragraphs including ``FLOAT SELECTED`` figure/table evidence, and several
annotators for some questions) and an authors file ``{paper_id: [names]}`` standing in for arXiv metadata.
Anything built from it is labelled :data:`lcrag.data.fixtures.FIXTURE_LABEL`.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from ...data.fixtures import FIRST_NAMES, LAST_NAMES

_TOPICS = [("Vietnamese Word Segmentation", "word segmentation"), ("Winograd Schemas", "coreference"),
           ("TF-IDF Features", "text classification"), ("Cross-lingual Transfer", "machine translation"),
           ("Sarcasm Detection", "sentiment analysis"), ("Dialogue State Tracking", "dialogue"),
           ("Named Entity Recognition", "information extraction"), ("Abstractive Summarization", "summarization"),
           ("Question Generation", "question answering"), ("Hate Speech Detection", "social media"),
           ("Morphological Inflection", "morphology"), ("Relation Extraction", "knowledge graphs"),
           ("Code-Switched Speech", "speech recognition"), ("Fake News Detection", "fact checking"),
           ("Emotion Recognition", "affective computing"), ("Semantic Parsing", "program synthesis")]
_DATASETS = ["NewsCorp-5k", "TweetBank", "WikiQA-Lite", "OpenDial", "SciText", "LawSum", "MedNotes", "ForumTalk"]
_METRICS = ["F1", "accuracy", "BLEU", "ROUGE-L", "exact match"]
_MODELS = ["BiLSTM-CRF", "BERT-base", "a CNN", "RoBERTa-large", "a transformer", "logistic regression"]


_TITLES = ["Improving {topic} with Multi-task Learning", "A Study of {topic} for {field}",
           "Towards Robust {topic} on Noisy Text", "{topic} in Low-Resource Settings",
           "Revisiting {topic}: Lessons from {ds}", "Neural {topic} without External Lexicons",
           "Shared Encoders for {field}: The Case of {topic}"]


def _paper(i: int, rng: random.Random) -> tuple[str, dict, list[str], dict]:
    topic, field = _TOPICS[i % len(_TOPICS)]
    pid = f"19{10 + i % 3:02d}.{1000 + 37 * i:05d}"
    ds, metric, model = rng.choice(_DATASETS), rng.choice(_METRICS), rng.choice(_MODELS)
    base = 60 + (i * 7) % 20
    ours = base + 2 + i % 5
    n_auth = 1 + i % 4
    authors = [f"{rng.choice(FIRST_NAMES)} {last}" for last in rng.sample(LAST_NAMES, n_auth)]
    title = _TITLES[i % len(_TITLES)].format(topic=topic, field=field.title(), ds=ds)
    P = {
        "intro1": f"{topic} is a core problem in {field}. Prior systems rely on hand-crafted features and struggle on noisy text.",
        "intro2": f"In this work we propose a multi-task model that shares an encoder across {field} tasks.",
        "rel1": f"Earlier work on {field} used feature-based classifiers and rule systems.",
        "data1": f"We evaluate on the {ds} corpus, which contains {1000 + 250 * i} annotated documents.",
        "data2": "The corpus was split into training, development and test sets with a ratio of 8:1:1.",
        "model1": f"Our encoder is {model} with an auxiliary tagging head; we train with Adam for {5 + i % 10} epochs.",
        "model2": "We do not use any external lexicons or pretrained gazetteers.",
        "res1": f"Our model reaches {ours}.{i % 10} {metric}, compared with {base}.0 for the strongest baseline.",
        "res2": "The gains are largest on short documents with informal spelling.",
        "conc1": f"We showed that multi-task learning helps {topic.lower()} and plan to release our code.",
    }
    full_text = [
        {"section_name": "Introduction", "paragraphs": [P["intro1"], P["intro2"]]},
        {"section_name": "Related Work", "paragraphs": [P["rel1"]]},
        {"section_name": "Data", "paragraphs": [P["data1"], P["data2"]]},
        {"section_name": "Model ::: Encoder", "paragraphs": [P["model1"], "", P["model2"]]},
        {"section_name": "Results", "paragraphs": [P["res1"], P["res2"]]},
        {"section_name": "Conclusion", "paragraphs": [P["conc1"]]},
    ]
    rec = {"title": title,
           "abstract": f"We study {topic.lower()} for {field}. A shared encoder improves {metric} on {ds}.",
           "full_text": full_text, "qas": [],
           "figures_and_tables": [{"caption": f"Table 1: {metric} of all systems on {ds}.", "file": "1-Table1-1.png"}]}
    return pid, rec, authors, {"ds": ds, "metric": metric, "model": model, "P": P, "topic": topic, "gain": ours - base}


def _ann(aid: str, *, unanswerable=False, spans=(), yes_no=None, free="", evidence=()) -> dict:
    return {"answer": {"unanswerable": unanswerable, "extractive_spans": list(spans), "yes_no": yes_no,
                       "free_form_answer": free, "evidence": list(evidence), "highlighted_evidence": list(evidence)},
            "annotation_id": aid, "worker_id": f"w{aid[-4:]}"}


def _qa(pid: str, k: int, question: str, anns: list[dict]) -> dict:
    qid = hashlib.sha1(f"{pid}/{k}".encode()).hexdigest()  # 40 hex digits, like the release
    return {"question": question, "question_id": qid, "nlp_background": "two", "topic_background": "familiar",
            "paper_read": "no", "search_query": "", "question_writer": f"writer{k}", "answers": anns}


def qasper_records(n_papers: int = 16, seed: int = 0) -> tuple[dict, dict]:
    """QASPER dev records ``{paper_id: paper}`` and an authors map (deterministic in ``seed``)."""
    rng = random.Random(seed)
    data, authors = {}, {}
    for i in range(n_papers):
        pid, rec, auth, f = _paper(i, rng)
        P, a = f["P"], f"{i:04d}"
        rec["qas"] = [
            _qa(pid, 0, "Which dataset do they evaluate on?",
                [_ann(f"x{a}", spans=[f["ds"]], evidence=[P["data1"]]),
                 _ann(f"y{a}", spans=[f"the {f['ds']} corpus"], evidence=[P["data1"], P["data2"]])]),
            _qa(pid, 1, "Do they use external lexicons?",
                [_ann(f"b{a}", yes_no=False, evidence=[P["model2"]])]),
            _qa(pid, 2, "How much does the model improve over the baseline?",
                [_ann(f"f{a}", free=f"By about {f['gain']} points of {f['metric']}",
                      evidence=[P["res1"], f"FLOAT SELECTED: Table 1: {f['metric']} of all systems on {f['ds']}."])]),
            _qa(pid, 3, "What hardware was used for training?",
                [_ann(f"u{a}", unanswerable=True), _ann(f"v{a}", unanswerable=True)]),
        ]
        if i % 2 == 0:
            rec["qas"].append(_qa(pid, 4, "Is the code released?",
                                  [_ann(f"c{a}", yes_no=True, evidence=[P["conc1"]]),
                                   _ann(f"d{a}", unanswerable=True)]))
        data[pid], authors[pid] = rec, auth
    return data, authors


def write_qasper(out_dir: str | Path, **kw) -> tuple[Path, Path]:
    """Write ``qasper-dev-v0.3.json`` and ``qasper-authors.json``; returns both paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data, authors = qasper_records(**kw)
    dp, ap = out / "qasper-dev-v0.3.json", out / "qasper-authors.json"
    dp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    ap.write_text(json.dumps(authors, ensure_ascii=False, indent=1), encoding="utf-8")
    return dp, ap
