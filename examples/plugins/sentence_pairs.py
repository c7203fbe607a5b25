"""Example plugin: a custom **chunker**.

``sentence_pairs`` cuts each document into chunks of ``size`` consecutive sentences (default
2) with the shared splitter; spans come from :func:`lcrag.chunks_from_spans`,
so ``doc.text[c.start:c.end] == c.text`` holds and provenance is kept.

Use it from a study file::

    plugins: [examples/plugins/sentence_pairs.py]
    rag:
      chunkers: [sentences, {name: sentence_pairs, size: 2, label: pairs}]
"""

from lcrag import chunks_from_spans, register_chunker
from lcrag.chunking import split_sentences


def sentence_pairs(doc, size=2):
    sents = split_sentences(doc.text)
    spans = [(sents[i][0], sents[min(i + size, len(sents)) - 1][1]) for i in range(0, len(sents), size)]
    return chunks_from_spans(doc, spans, f"sent{size}")


register_chunker("sentence_pairs", sentence_pairs, replace=True)
