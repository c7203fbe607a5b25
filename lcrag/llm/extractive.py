"""The ``extractive`` baseline reader: no model, deterministic, labelled a baseline everywhere.

Two hops of lexical matching over the context's citable lines:

1. hop 1 = the line with the highest IDF-weighted overlap with the question's content words;
2. hop 2 = the best other line for the question expanded with hop 1's entities (names and
   numbers), if it shares any term with that expanded query.

With ``passes=1`` (the **single-pass** baseline) hop 2 is simply the next-best line for the
question alone (top lines for the question, no bridge expansion).

It cites those lines (at most ``cite_k``) and answers:

* two lines cited: the entity or number of the cited lines that is not in the question and not shared between
  the hops (the bridge entity) — hop 2's first, else hop 1's;
* otherwise (one line cited, e.g. an oracle context of the gold line alone, or no such entity): from hop 1, the
  line that matches the question best — its first entity or number not in the question, else its longest run of
  words that are not the question's (:func:`residual`: "The car of Alice is red." answers "What colour is the
  car of Alice?" with "red"), so a single-hop question over its gold line is answered;
* "NA" when hop 1 has neither.

Scope: the entity chaining is built for two-hop questions; over a long context a single-hop question's second
cited line is usually unrelated, and its entity is the answer given. ``lcrag run`` warns when the baseline's
oracle score says it cannot answer a study's questions (:func:`scope_warning`).

It is a weak, honest floor: it cannot make world-knowledge inferences (NoLiMa two-hop) and never paraphrases.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from ..types import Line

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
_ENTITY = re.compile(r"\b(?:[A-Z][\w'’-]*(?:\s+(?:Inc\.|Ltd\.|[A-Z][\w'’-]*))*|\d+(?:[.,]\d+)?)")
STOPWORDS = frozenset(
    """a an the of to in on at by for with from and or but is are was were be been being has have had do does did
    which who whom whose what when where why how that this these those it its as into than then there their they he she
    his her him i you we our your not no can cannot could would should will shall may might must about after before
    over under up down out off also only very just so such any all each every some most more other one""".split()
)


def tokens(text: str) -> list[str]:
    """Lowercased alphanumeric tokens without stopwords."""
    return [t for t in (m.lower() for m in _TOKEN.findall(text)) if t not in STOPWORDS]


@lru_cache(maxsize=1 << 18)
def token_set(text: str) -> frozenset[str]:
    """``frozenset(tokens(text))``, memoised: haystacks drawn from one pool repeat the same lines
    across trials and lengths, so each distinct line is tokenized once per process."""
    return frozenset(tokens(text))


def entities(text: str) -> list[str]:
    """Capitalised name spans and numbers; a sentence-initial stopword ("The", "Then") is dropped."""
    out = []
    for m in _ENTITY.finditer(text):
        e = m.group(0).strip()
        words = e.split()
        while words and words[0].lower() in STOPWORDS:
            words = words[1:]
        if words:
            out.append(" ".join(words).rstrip("."))
    return out


def _plain(tok: str) -> str:
    """A token without a possessive ``'s`` (``alice's`` → ``alice``)."""
    return re.sub(r"['’]s$", "", tok)


def residual(text: str, question: str) -> str | None:
    """The longest run of ``text``'s words that are not the question's (stopwords inside a run kept, at its ends
    dropped; a possessive ``'s`` ignored when comparing): what the line says beyond the question. None when every
    content word of the line is in the question."""
    qset = {_plain(t) for t in tokens(question)}
    words = list(_TOKEN.finditer(text))
    best: tuple[int, int, int] | None = None  # (content words, start index, end index)
    start, content = None, 0
    for i, m in enumerate(words + [None]):
        low = m.group(0).lower() if m else ""
        in_q = m is None or _plain(low) in qset
        if in_q:
            if start is not None and content and (best is None or content > best[0]):
                best = (content, start, last)
            start, content = None, 0
            continue
        if low in STOPWORDS:
            continue
        if start is None:
            start = i
        last, content = i, content + 1
    if best is None:
        return None
    _, a, b = best
    return text[words[a].start():words[b].end()]


def scope_warning(rows, *, answer: str | None = None, threshold: float = 0.5) -> list[str]:
    """Warnings for the model-free extractive readers whose answer score on the oracle condition (the gold lines
    only) is below ``threshold``: the baseline cannot answer this study's questions, so its LC and RAG scores say
    nothing about retrieval. ``rows``: a results frame (``reader``, ``condition``, ``outcome``, ``meta.reader_label``
    and an answer measure column: ``answer``, the study's declared answer measure, else the first of the generic
    names present)."""
    import pandas as pd

    if not isinstance(rows, pd.DataFrame) or rows.empty or "condition" not in rows:
        return []
    label = rows.get("meta.reader_label", rows["reader"]).astype(str)
    ans = answer if answer in rows else next((c for c in ("ans_contains", "synthetic_ans", "ans_em", "ans_f1") if c in rows), None)
    if ans is None:
        return []
    oracle = rows[(rows["condition"].astype(str).str.contains("oracle", case=False)) & (rows["outcome"] == "ok")
                  & label.str.contains("extractive", case=False)]
    out = []
    for reader, g in oracle.groupby("reader", sort=False):
        v = pd.to_numeric(g[ans], errors="coerce").dropna()
        if len(v) and v.mean() < threshold:
            out.append(f"[lcrag] warning: {reader}: the extractive baseline scores {ans} {v.mean():.2f} on the oracle "
                       f"condition (the gold lines alone, n={len(v)}): it chains entities of two lines and cannot "
                       "answer most of this study's questions, so its LC and RAG scores say little about retrieval")
    return out


def _best_line(index: "LineIndex", query: Counter, exclude: set[int]) -> tuple[int | None, float]:
    """The citable line with the highest ``sum idf(t) * count(t in query)`` over query tokens it contains
    (first such line in context order on ties; None unless the best score is > 0).

    Only lines sharing a token with the query can score, so they are found through the
    postings lists; the per-line sums add the same terms in the same (query) order as a scan
    over every line would, so scores and choices are identical to that scan.
    """
    scores: dict[int, float] = {}
    for t, c in query.items():
        w = index.idf(t) * c
        for pos in index.postings(t):
            scores[pos] = scores.get(pos, 0) + w
    best, best_score = None, 0.0
    for pos in sorted(scores):
        number = index.citable[pos].number
        if number not in exclude and scores[pos] > best_score:
            best, best_score = number, scores[pos]
    return best, best_score


class LineIndex:
    """Token sets of a context's citable lines, with each token's postings (positions in ``citable``)
    and IDF ``log(1 + (n - df + 0.5) / (df + 0.5))`` (``df``: the lines containing it, ``n``: the
    citable lines) built once per context and reused by the prompts and readers asked over it.

    Postings and IDF are computed for the tokens a question asks about, when first asked: a
    haystack of 15,000 lines has ~20,000 distinct tokens and a question a dozen.
    """

    def __init__(self, lines: Sequence[Line]):
        self.citable = [ln for ln in lines if ln.citable]
        self.sets = [token_set(ln.text) for ln in self.citable]  # per position in ``citable``
        self._postings: dict[str, list[int]] = {}

    def postings(self, token: str) -> list[int]:
        """Positions in ``citable`` of the lines containing ``token``, ascending."""
        p = self._postings.get(token)
        if p is None:
            p = self._postings[token] = [pos for pos, s in enumerate(self.sets) if token in s]
        return p

    def idf(self, token: str) -> float:
        """IDF of ``token`` over the citable lines; 0.0 for a token no line contains."""
        df = len(self.postings(token))
        if not df:
            return 0.0
        return math.log(1 + (len(self.citable) - df + 0.5) / (df + 0.5))


def context_index(ctx) -> LineIndex:
    """The :class:`LineIndex` of a rendered context, built once and kept on it (the extractive readers'
    prompts and the synthetic difficulty report share it, postings asked for already included)."""
    index = ctx.__dict__.get("_extractive_index")
    if index is None:
        index = LineIndex(ctx.lines)
        object.__setattr__(ctx, "_extractive_index", index)
    return index


def query_overlaps(index: LineIndex, query: set[str]) -> list[int]:
    """Per citable line of ``index`` (in order), how many of the ``query`` tokens it contains: the size of
    ``query & token_set(line)``, counted through the postings of the query's tokens."""
    counts = [0] * len(index.citable)
    for t in query:
        for pos in index.postings(t):
            counts[pos] += 1
    return counts


def extract(lines: Sequence[Line] | LineIndex, question: str, cite_k: int = 2, passes: int = 2) -> tuple[str, list[int]]:
    """Return (answer, cited line numbers) for ``question`` over ``lines`` (see module doc).

    ``passes=2``: hop 2 is searched with the question expanded by hop 1's entities (bridging);
    ``passes=1``: hop 2 is the next-best line for the question alone.
    """
    if passes not in (1, 2):
        raise ValueError(f"passes must be 1 or 2, got {passes}")
    index = lines if isinstance(lines, LineIndex) else LineIndex(lines)
    citable = index.citable
    if not citable:
        return "NA", []
    q = Counter(tokens(question))
    by_num = {ln.number: ln for ln in citable}
    h1, s1 = _best_line(index, q, set())
    if h1 is None:
        return "NA", []
    cited = [h1]
    e1 = entities(by_num[h1].text)
    if cite_k > 1:
        q2 = q + Counter(t for e in e1 for t in tokens(e)) if passes == 2 else q
        h2, _ = _best_line(index, q2, {h1})
        if h2 is not None:
            cited.append(h2)
    qset = set(tokens(question))

    def fresh(ents: list[str], shared: set[str]) -> list[str]:
        return [e for e in ents if e.lower() not in shared and not (set(tokens(e)) and set(tokens(e)) <= qset)]

    answer = None
    if len(cited) > 1:
        e2 = entities(by_num[cited[1]].text)
        shared = {e.lower() for e in e1} & {e.lower() for e in e2}
        cand = fresh(e2, shared) or fresh(e1, shared)
        answer = cand[0] if cand else None
    if answer is None:  # one line cited (or no entity left): hop 1 is the line that answers the question
        cand = fresh(e1, set())
        answer = cand[0] if cand else (residual(by_num[h1].text, question) or "NA")
    return answer, cited[:cite_k]
