"""Example plugin: a custom **reader** (no model; a stand-in for your own inference code).

A reader class receives its profile and answers a :class:`lcrag.ReadRequest`
(chat messages + the rendered context) with a :class:`lcrag.CallResult`. This one
cites the citable line sharing the most words with the question and answers with that line's
last capitalised word. Replace ``read`` with a call into your own model. Responses go through
lcrag's cache, parser and scorers like any other reader (the profile's ``model`` and decoding
fields enter the cache key).

Use it from a study file (inline profile; ``kind`` selects the class)::

    plugins: [examples/plugins/keyword_reader.py]
    readers:
      - {name: keyword, kind: keyword, model: keyword-v1, family: plugin, label: "keyword baseline (plugin example)"}
"""

import json
import re

from lcrag import CallResult, Reader, register_reader

_WORD = re.compile(r"[a-z0-9]+")


class KeywordReader(Reader):
    def __init__(self, profile):
        self.profile = profile

    def read(self, request):
        if request.context is None:
            return CallResult(False, error="keyword reader needs the rendered context")
        q = set(_WORD.findall(request.question.lower()))
        best = max((ln for ln in request.context.lines if ln.citable),
                   key=lambda ln: (len(q & set(_WORD.findall(ln.text.lower()))), -ln.number), default=None)
        if best is None:
            return CallResult(True, text=json.dumps({"lines": [], "answer": "NA"}), attempts=1)
        caps = re.findall(r"\b[A-Z][a-z]+\b", best.text)
        answer = caps[-1] if caps else "NA"
        text = json.dumps({"lines": [best.number], "answer": answer}) if request.expects_json else answer
        return CallResult(True, text=text, attempts=1)


register_reader("keyword", KeywordReader, replace=True)
