"""Example plugin: a custom **scorer**.

``answer_in_cited`` is 1 when the answer string (lowercased) occurs in at least one of the
lines the reader cited — a cheap check that the answer is *grounded* in its own citations,
whatever the gold evidence. Evidence-kind scorers are skipped for answer-only prompts.

Use it from a study file::

    plugins: [examples/plugins/answer_in_cited.py]   # path relative to the YAML, or a module name
    scorers: [contains, evid_strict, answer_in_cited]
"""

from lcrag import register_scorer


def answer_in_cited(s):
    """``s`` is a :class:`lcrag.experiment.scorers.ScoreInput`."""
    if not s.answer:
        return 0.0
    a = s.answer.strip().lower()
    texts = [s.context.line(n).text.lower() for n in s.cited if s.context.line(n) is not None]
    return float(any(a in t for t in texts))


register_scorer("answer_in_cited", answer_in_cited, kind="evidence", replace=True)
