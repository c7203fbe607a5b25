"""Example plugin: a custom **measure**.

``answer_in_cited`` is 1 when the answer string (lowercased) occurs in at least one of the
lines the reader cited — a cheap check that the answer is *grounded* in its own citations,
whatever the gold evidence. Evidence-kind measures are skipped for answer-only prompts.

A measure is ``fn(task, response) -> float | lcrag.scoring.families.Score | None`` registered
with ``lcrag.measure`` — the same contract as every built-in measure; its name is the result
column. ``task.item`` (question, answers), ``task.context`` (rendered lines, ``gold_lines``) and
``response`` (``answer``, cited ``lines``, ``raw``) are what it reads.

Use it from a study file::

    plugins: [examples/plugins/answer_in_cited.py]   # path relative to the YAML, or a module name
    scorers: [ans_contains, evid_exact_set, answer_in_cited]
"""

from lcrag import measure


@measure("answer_in_cited", kind="evidence", replace=True, section="example plugin")
def answer_in_cited(task, response):
    """1 if the parsed answer (lowercased) occurs in a cited line's text, else 0 (0 when unparsed)."""
    if not response.answer:
        return 0.0
    a = response.answer.strip().lower()
    lines = [task.context.line(n) for n in response.lines]
    return float(any(a in ln.text.lower() for ln in lines if ln is not None))
