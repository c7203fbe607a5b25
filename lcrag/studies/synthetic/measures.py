"""Measures of the synthetic two-hop study (EBG §4.1, §5.1.2; data README §6.1).

Reply: the row's rule (``task.meta["reply_rule"]``, :mod:`lcrag.scoring.filters`): ``"authors"``
(default) re-reads the raw reply with the synthetic runner's first-object filter
(:func:`~lcrag.studies.synthetic.reply.authors_synthetic`) and an empty reply is *unusable*
— every synthetic measure is NaN for it (out of every denominator) and ``synthetic_unusable`` is 1;
``"lcrag"`` scores the runner's own parse as is (such replies score 0).

Prompts in :data:`~lcrag.studies.synthetic.reply.ANSWER_ONLY_PROMPTS` give ``synthetic_ans_star`` only; the
EBG prompt gives the others. Line numbers as rendered in the haystack (0-based). Gold evidence is
both needle lines of the haystack (``context.metadata["gold_all"]``, also in RAG contexts that miss
one and with no context, so such a context can never score 1 on the exact set), else the context's
gold lines. The hops are ordered by :func:`lcrag.studies.synthetic.data.hop_order`
(``item.metadata["hop_lines"]``).
"""

from __future__ import annotations

from lcrag.measures import measure
from lcrag.scoring import families as f
from lcrag.scoring.filters import expects_json, task_reply
from lcrag.studies.synthetic.reply import ANSWER_ONLY_PROMPTS, authors_synthetic


def reply(task, response):
    """The row's reply under its rule, with the synthetic runner's authors' filter."""
    return task_reply(task, response, authors=authors_synthetic, json_reply=expects_json(task))


def answer_only(task) -> bool:
    return task.prompt in ANSWER_ONLY_PROMPTS


def ebg(task) -> bool:
    return not answer_only(task)


def gold(task) -> tuple[int, ...]:
    """Both needle lines of the haystack (``gold_all``), else the context's gold lines."""
    return tuple(task.context.metadata.get("gold_all") or task.context.gold_lines)


def hop_line(i: int):
    """``task -> line of hop i`` (1-based hop index) of ``item.metadata["hop_lines"]``."""
    def line(task):
        return task.item.metadata["hop_lines"][i - 1]
    line.__name__ = f"hop_line_{i}"
    return line


def has_hops(task) -> bool:
    return ebg(task) and bool(task.item.metadata.get("hop_lines"))


S = "EBG §4.1, §5.1.2"
measure("synthetic_ans_star", kind="answer", label="Ans*", section=S, doc=(
    "Answer-only prompts: 1 if the answer is exactly a gold answer (case-sensitive after stripping '.'); "
    "NaN for an unusable reply; no value for the EBG prompt."))(f.answer("exact", reply=reply, applies=answer_only))
measure("synthetic_ans", kind="answer", label="Ans (exact)", section=S, doc=(
    "EBG prompt: 1 if the answer is exactly a gold answer (case-sensitive after stripping '.'); NaN for an "
    "unusable reply; no value for answer-only prompts."))(f.answer("exact", reply=reply, applies=ebg))
measure("synthetic_evid_exact_set", kind="evidence", label="Evid (exact set)", section="EBG §4.1", doc=(
    "1 if the cited lines are exactly the haystack's two needle lines (cited set == gold set; an extra or a "
    "missing line fails, order and duplicates ignored); NaN for an unusable reply."))(
    f.evidence("exact_set", gold=gold, missing=f.no_missing, reply=reply, applies=ebg))
measure("synthetic_evid_recall", kind="evidence", label="Evid recall", section="EBG §4.1", doc=(
    "Share of the haystack's needle lines that are cited (extras allowed); NaN for an unusable reply."))(
    f.evidence("recall", gold=gold, missing=f.no_missing, reply=reply, applies=ebg))

for _i in (1, 2):
    measure(f"synthetic_cite_hop{_i}", kind="evidence", label=f"cites hop {_i}",
            section="EBG §4.1 (per-hop, beyond the paper)", doc=(
                f"1 if the hop-{_i} fact's line is among the cited lines (extras allowed); EBG prompt on items "
                "with hop lines only; NaN for an unusable reply."))(
        f.line_cited(hop_line(_i), reply=reply, applies=has_hops))
    measure(f"synthetic_ctx_hop{_i}", kind="retrieval", label=f"hop {_i} in context",
            section="EBG §4.1 (retrieval coverage, beyond the paper)", doc=(
                f"1 if the hop-{_i} fact's line is in the context shown (1 in LC and oracle, 0 with no context; "
                "in RAG whether the retriever kept it); NaN for an unusable reply."))(
        f.line_in_context(hop_line(_i), reply=reply, applies=has_hops))

measure("synthetic_unusable", kind="other", label="unusable", section="EBG §4.1", doc=(
    "1 for an empty reply under the authors' rule (left out of every denominator; a non-empty unparseable one "
    "scores 0 and stays in, as LC-EBG's synthetic runner), 0 "
    "otherwise; no value under the lcrag rule. Counted by the study's summary as ``n_unusable``."))(
    f.unusable(reply=reply))
