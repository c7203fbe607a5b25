"""Generated stand-ins for MultiHop-RAG and QASPER dev, in their EXACT official schemas.

Neither real file ships with lcrag (data README §3, §5). Tests and notebooks use these small,
seeded, deterministic corpora instead; anything built from them must be labelled
"generated fixture data, not the real benchmark" (:data:`FIXTURE_LABEL`).

* :func:`multihop_records` / :func:`write_multihop`: ``corpus.json`` (articles ``{title,
  author, source, published_at, category, url, body}``, paragraphs separated by blank lines)
  and ``MultiHopRAG.json`` (inference / comparison / temporal queries whose ``evidence_list``
  facts are verbatim spans of the gold bodies — whole sentences, sentence prefixes, or two
  consecutive sentences — plus null queries with an empty ``evidence_list``, and one query
  whose fact is a paraphrase that cannot be located, as in the real data).
* :func:`qasper_records` / :func:`write_qasper`: ``qasper-dev-v0.3.json`` (papers with
  ``full_text`` sections/paragraphs, ``figures_and_tables`` and ``qas`` whose annotations cover
  unanswerable, yes/no, extractive spans and free-form answers, evidence paragraphs including
  ``FLOAT SELECTED`` figure/table evidence, and several annotators for some questions) and an
  authors file ``{paper_id: [names]}`` standing in for arXiv metadata.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

FIXTURE_LABEL = "generated fixture data, not the real benchmark"

_FIRST = ["Maria", "James", "Aiko", "Ravi", "Elena", "Tomas", "Grace", "Omar", "Lena", "Victor", "Nadia", "Samuel"]
_LAST = ["Okafor", "Lindqvist", "Tanaka", "Moreau", "Castillo", "Brennan", "Haddad", "Novak", "Whitfield", "Adeyemi",
         "Kowalski", "Ferreira", "Iversen", "Duarte"]
_COMPANIES = ["Aldermoor Systems", "Brightwave Labs", "Cobalt Ridge Capital", "Driftline Motors", "Emberfield Foods",
              "Fernhollow Health", "Glasspoint Media", "Harrowgate Energy", "Ironvale Robotics", "Juniper Bay Airlines",
              "Kestrel Analytics", "Lumenforge Games", "Marlowe Biotech", "Northspire Telecom", "Oakcrest Retail",
              "Pinefall Software", "Quarrystone Mining", "Redmark Insurance", "Silverline Rail", "Tidewater Shipping"]
_SOURCES = ["Harbor Times", "Metro Wire", "Pinecrest Post", "Daily Ledger", "Summit Review", "Coastline Herald"]
_CATEGORIES = ["technology", "business", "sports", "entertainment", "science", "health"]
_CITIES = ["Lisbon", "Osaka", "Denver", "Nairobi", "Tallinn", "Quito", "Perth", "Gdansk", "Halifax", "Porto"]
_PRODUCTS = ["a solar battery", "a delivery drone", "a budgeting app", "an electric scooter", "a protein snack",
             "a hearing aid", "a streaming service", "a cargo robot", "a payments card", "a smart thermostat"]
_FILLER = [
    "Analysts said the move had been expected for several months.",
    "Shares of the company were little changed in early trading.",
    "The announcement came during a busy week for the sector.",
    "Several competitors declined to comment on the news.",
    "Industry groups welcomed the decision in a brief statement.",
    "The details of the agreement were not disclosed.",
    "Regulators are expected to review the plan later this year.",
    "Customers will be able to sign up through the company website.",
    "Critics argued that the timeline was too ambitious.",
    "A spokesperson said more information would follow soon.",
]


_NOISE = [
    "{p} of {c} said demand for {x} rose {n} percent in the last quarter.",
    "In {c}, {p} told local officials that the {k} sector would need {n} new workers.",
    "A survey by {p} found that {n} percent of residents in {c} had tried {x}.",
    "Last year the city of {c} approved {n} permits for projects involving {x}.",
    "{p}, an economist based in {c}, expects prices for {x} to fall by {n} percent.",
    "The {k} market in {c} has grown for {n} consecutive months, {p} noted.",
    "Observers in {c} compared the plan with a {k} project led by {p} in {y}.",
]


def _noise(rng: random.Random) -> str:
    return rng.choice(_NOISE).format(p=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", c=rng.choice(_CITIES),
                                     x=rng.choice(_PRODUCTS), n=rng.randint(2, 90), k=rng.choice(_CATEGORIES),
                                     y=rng.randint(2001, 2022))


def _article(i: int, rng: random.Random) -> tuple[dict, dict]:
    comp = _COMPANIES[i % len(_COMPANIES)]
    ceo = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    city, product = _CITIES[(i // 10 + i) % len(_CITIES)], _PRODUCTS[i % len(_PRODUCTS)]  # unique pairs (i < 100)
    source = _SOURCES[i % len(_SOURCES)]
    day = 1 + (i * 7) % 28
    month = 9 + (i % 4)
    amount = 10 + (i * 13) % 190
    facts = {
        "launch": f"{comp} launched {product} in {city} on Tuesday, according to chief executive {ceo}.",
        "ceo_sent": f"The company is led by {ceo}, who joined in {2010 + i % 12}.",
        "money": f"{comp} said it would invest {amount} million dollars in a new plant near {city}.",
        "quote": f"\"We built this for people who want less hassle,\" {ceo} told reporters.",
    }
    paras = [
        [facts["launch"], rng.choice(_FILLER), facts["ceo_sent"]],
        [facts["money"], rng.choice(_FILLER), rng.choice(_FILLER)],
        [facts["quote"], rng.choice(_FILLER)],
    ]
    for _ in range(4):  # background paragraphs with their own names and numbers
        paras.append([_noise(rng) for _ in range(rng.randint(2, 4))])
    head, rest = paras[0], paras[1:]
    rng.shuffle(rest)
    paras = [head, *rest, [rng.choice(_FILLER), f"The {source} will follow the story as it develops."]]
    body = "\n\n".join(" ".join(p) for p in paras)
    facts["money_two"] = " ".join(paras[1][:2])  # two consecutive sentences
    rec = {
        "title": f"{comp} bets on {product.split(' ', 1)[1]} in {city} (report {i})",
        "author": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
        "source": source,
        "published_at": f"2023-{month:02d}-{day:02d}T{8 + i % 10:02d}:00:00+00:00",
        "category": _CATEGORIES[i % len(_CATEGORIES)],
        "url": f"https://example.org/news/{i}",
        "body": body,
    }
    return rec, {"company": comp, "ceo": ceo, "city": city, "product": product, "amount": amount, **facts}


def _ev(rec: dict, fact: str) -> dict:
    return {"title": rec["title"], "author": rec["author"], "url": rec["url"], "source": rec["source"],
            "category": rec["category"], "published_at": rec["published_at"], "fact": fact}


def multihop_records(n_articles: int = 60, n_queries: int = 48, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Corpus and query records in the official MultiHop-RAG schema (deterministic in ``seed``)."""
    rng = random.Random(seed)
    arts = [_article(i, rng) for i in range(n_articles)]
    corpus = [a for a, _ in arts]
    queries: list[dict] = []
    kinds = ["inference_query", "comparison_query", "temporal_query", "inference_query", "null_query",
             "comparison_query", "temporal_query"]
    for k in range(n_queries):
        kind = kinds[k % len(kinds)]
        a, b = rng.sample(range(n_articles), 2)
        (ra, fa), (rb, fb) = arts[a], arts[b]
        if kind == "inference_query":
            third = fa["launch"].split(",")[0]  # a sentence prefix
            q = (f"Which company, led by an executive quoted in the {ra['source']}, launched {fa['product']} "
                 f"in {fa['city']} and also appears in a {rb['source']} report about {fb['city']}?")
            ev = [_ev(ra, third), _ev(ra, fa["ceo_sent"]), _ev(rb, fb["money"])]
            queries.append({"query": q, "answer": fa["company"], "question_type": kind, "evidence_list": ev})
        elif kind == "comparison_query":
            bigger = fa["amount"] > fb["amount"]
            q = (f"Did the {ra['source']} report a larger planned investment by {fa['company']} than the "
                 f"investment by {fb['company']} reported by the {rb['source']}?")
            ev = [_ev(ra, fa["money_two"]), _ev(rb, fb["money"])]
            queries.append({"query": q, "answer": "Yes" if bigger else "No", "question_type": kind, "evidence_list": ev})
        elif kind == "temporal_query":
            first = fa["company"] if ra["published_at"] < rb["published_at"] else fb["company"]
            q = (f"Which company was reported first: the one launching {fa['product']} in {fa['city']} "
                 f"({ra['source']}) or the one launching {fb['product']} in {fb['city']} ({rb['source']})?")
            ev = [_ev(ra, fa["launch"]), _ev(rb, fb["launch"])]
            queries.append({"query": q, "answer": first, "question_type": kind, "evidence_list": ev})
        else:
            q = f"What did {rng.choice(_FIRST)} {rng.choice(_LAST)} say about the merger of two rail firms in {rng.choice(_CITIES)}?"
            queries.append({"query": q, "answer": "Insufficient information.", "question_type": kind, "evidence_list": []})
    # one answerable query whose fact is a paraphrase: it cannot be located (skipped by the pilot rule)
    ra, fa = arts[0]
    queries.append({"query": f"Who leads {fa['company']}?", "answer": fa["ceo"], "question_type": "inference_query",
                    "evidence_list": [_ev(ra, f"{fa['ceo']} is in charge of {fa['company']} these days.")]})
    return corpus, queries


def write_multihop(out_dir: str | Path, **kw) -> tuple[Path, Path]:
    """Write ``corpus.json`` and ``MultiHopRAG.json`` into ``out_dir``; returns both paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    corpus, queries = multihop_records(**kw)
    cp, qp = out / "corpus.json", out / "MultiHopRAG.json"
    cp.write_text(json.dumps(corpus, indent=4, ensure_ascii=False), encoding="utf-8")
    qp.write_text(json.dumps(queries, indent=4, ensure_ascii=False), encoding="utf-8")
    return cp, qp


# ------------------------------------------------------------------------------------ QASPER
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
    authors = [f"{rng.choice(_FIRST)} {last}" for last in rng.sample(_LAST, n_auth)]
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
