"""A generated stand-in for MultiHop-RAG (data README §3), in its EXACT official schema.

:func:`multihop_records` / :func:`write_multihop`: ``corpus.json`` (articles ``{title, author, source,
published_at, category, url, body}``, paragraphs separated by blank lines) and ``MultiHopRAG.json`` (inference /
comparison / temporal queries whose ``evidence_list`` facts are verbatim spans of the gold bodies — whole
sentences, sentence prefixes, or two consecutive sentences — plus null queries with an empty ``evidence_list``,
and one query whose fact is a paraphrase that cannot be located, as in the real data). Anything built from it is
labelled :data:`lcrag.data.fixtures.FIXTURE_LABEL`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ...data.fixtures import FIRST_NAMES, LAST_NAMES

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
    return rng.choice(_NOISE).format(p=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}", c=rng.choice(_CITIES),
                                     x=rng.choice(_PRODUCTS), n=rng.randint(2, 90), k=rng.choice(_CATEGORIES),
                                     y=rng.randint(2001, 2022))


def _article(i: int, rng: random.Random) -> tuple[dict, dict]:
    comp = _COMPANIES[i % len(_COMPANIES)]
    ceo = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
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
        "author": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
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
            q = f"What did {rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)} say about the merger of two rail firms in {rng.choice(_CITIES)}?"
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
