"""Example plugin: a custom **retriever**.

``jaccard`` ranks chunks by the Jaccard overlap of lowercased word sets between the query and
the chunk text (ties by chunk order). It subclasses :class:`lcrag.Retriever`, so it
implements only ``_score_rows``; ``rank``/``search`` come with the base class.

Use it from a study file::

    plugins: [examples/plugins/jaccard_retriever.py]
    rag:
      retrievers: [bm25, jaccard]
"""

import re

import numpy as np

from lcrag import Retriever, register_retriever

_WORD = re.compile(r"[a-z0-9]+")


def _words(text):
    return set(_WORD.findall(text.lower()))


class JaccardRetriever(Retriever):
    name = "jaccard"

    def __init__(self, chunks):
        self.chunks = list(chunks)
        self._sets = [_words(c.display_text) for c in self.chunks]

    def _score_rows(self, queries, rows):
        idx = range(len(self.chunks)) if rows is None else rows
        out = np.zeros((len(queries), len(idx)))
        for qi, q in enumerate(queries):
            qs = _words(q)
            for j, i in enumerate(idx):
                s = self._sets[i]
                out[qi, j] = len(qs & s) / len(qs | s) if qs | s else 0.0
        return out


register_retriever("jaccard", lambda chunks, **params: JaccardRetriever(chunks, **params), replace=True)
