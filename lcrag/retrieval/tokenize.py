"""The one lexical tokenizer of lcrag retrieval (BM25, query expansion, PRF, near-duplicates).

``tokenize(text)``: lowercase, then maximal runs of Unicode word characters (regex ``\\w+``:
letters, digits, underscore). Punctuation and whitespace separate tokens, so
``"fish-based"`` -> ``["fish", "based"]`` and ``"I'm"`` -> ``["i", "m"]``. No stemming and no
stopword removal (BM25 sees every token; expansion filters with :data:`STOPWORDS`).
Both BM25 backends and the rank-bm25 reference are fed the same tokens, so their scores
are comparable one for one.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")

# A small English stopword list (function words and question words) used by keyword
# extraction and PRF (LongEval-RAG paper §3.3), never by BM25 itself.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can cannot could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so some
    such than that the their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your yours yourself
    yourselves using used use via within without among across upon whether""".split()
)


def tokenize(text: str) -> list[str]:
    """Lowercased ``\\w+`` tokens of ``text`` (see module docstring)."""
    return _WORD.findall(text.lower())
