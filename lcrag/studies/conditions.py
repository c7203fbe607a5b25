"""Reference conditions derived from any numbered context: *no context* and *oracle evidence*.

Both bracket a long-context or RAG result (LongBench v2's ``--no_context``; the oracle
condition of recent LC-vs-RAG studies):

* :func:`no_context` — the question alone: an empty context (no lines). The gold line numbers
  are kept, so a citation can only score by chance. A correct answer here means the question is
  answerable without any context (guessable or known).
* :func:`oracle_evidence` — exactly the gold lines of the source context, in their original
  order and **numbered as in the source** (a gold line shown as ``4127: …`` in the haystack is
  ``4127: …`` here too). A miss here is a reading miss on the evidence itself.

They take and return :class:`lcrag.types.Context` only, so any study can derive them from
the contexts it already builds; the condition label is ``"<prefix>no-context"`` /
``"<prefix>oracle"``.
"""

from __future__ import annotations

from dataclasses import replace

from ..types import Context

NO_CONTEXT = "no-context"
ORACLE = "oracle"


def no_context(ctx: Context, *, prefix: str = "") -> Context:
    """The question-alone condition of ``ctx`` (module doc)."""
    return Context(text="", lines=(), gold_lines=ctx.gold_lines, numbering_base=ctx.numbering_base,
                   condition=prefix + NO_CONTEXT, metadata={**ctx.metadata, "source_condition": ctx.condition})


def oracle_evidence(ctx: Context, *, prefix: str = "", fmt: str = "{n}: {text}") -> Context:
    """The gold lines of ``ctx`` alone, numbered as in ``ctx`` (module doc)."""
    gold = set(ctx.gold_lines)
    lines = tuple(ln for ln in ctx.lines if ln.number in gold and ln.citable)
    if len(lines) != len(gold):
        missing = sorted(gold - {ln.number for ln in lines})
        raise ValueError(f"gold lines {missing} are not citable lines of context {ctx.condition!r}")
    text = "\n".join(fmt.format(n=ln.number, text=ln.text) for ln in lines)
    return replace(ctx, text=text, lines=lines, condition=prefix + ORACLE,
                   metadata={**ctx.metadata, "source_condition": ctx.condition})
