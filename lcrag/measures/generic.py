"""Generic measures every study may list (own studies' ``scorers:``, the conditions study).

Reply: the runner's parse (lcrag's rule; every reply is scored). Evidence conventions (EBG §3.1;
data README §6.1, §6.3): cited lines are ``response.lines`` as rendered in the context (0-based LC
haystacks, 1-based NoLiMa RAG store); gold lines ``task.context.gold_lines``; gold units with no
line in the context (``context.metadata["missing_units"]``, in RAG: not retrieved) can never be
cited. Evidence measures give no value for prompts that do not ask for cited lines.
"""

from __future__ import annotations

from ..scoring import families as f
from ..scoring.answer import is_refusal
from . import get, measure

measure("ans_contains", kind="answer", label="Ans", section="EBG §4.2; data README §6.2", doc=(
    "1 if any accepted answer (``item.answers``), lowercased, is a substring of the lowercased parsed "
    "answer; 0 otherwise (also for an unparsed answer). Characters, case-insensitive, best over the "
    "accepted answers; no other normalisation (NoLiMa ``contains`` rule)."))(f.answer("contains"))

measure("exact", kind="answer", label="Ans (exact)", section="EBG §4.1; data README §6.1", doc=(
    "1 if the parsed answer equals an accepted answer (case-sensitive, after stripping '.'), else 0."
))(f.answer("exact"))

measure("multihop", kind="answer", label="Ans (MultiHop rule)", section="EBG App. D.1; data README §6.3", doc=(
    "MultiHop-RAG answer rule (normalisation and prefix rule), best over the accepted answers."
))(f.answer("multihop"))

measure("evid_exact_set", kind="evidence", label="Evid (exact set)", section="EBG §3.1, §4.1; data README §6.1", doc=(
    "1 if no gold unit is missing from the context and the set of cited lines equals the set of gold "
    "lines; 0 otherwise (an extra or a missing line fails; order and duplicates do not matter)."
))(f.evidence("exact_set"))

measure("evid_all_gold_cited", kind="evidence", label="Evid (all gold cited)", section="EBG §4.3; data README §6.3",
        doc=("1 if no gold unit is missing from the context and every gold line is among the cited lines; "
             "extra cited lines are allowed (MultiHop-RAG's \"Evid strict\")."))(f.evidence("all_gold"))

measure("evid_recall", kind="evidence", label="Evid recall", section="EBG §3.1; data README §6.1", doc=(
    "Cited gold lines / (gold lines in the context + gold units missing from it); a missing unit "
    "counts as one uncited gold line; 0 when there is no gold. Extras allowed."))(f.evidence("recall"))

measure("evid_precision", kind="evidence", label="Evid precision", section="EBG §3.1; data README §6.1", doc=(
    "Cited gold lines / distinct cited lines; 0 when nothing is cited."))(f.evidence("precision"))

measure("ans_evid", kind="joint", label="Ans+Evid", section="EBG §3.1, Figure 4", doc=(
    "The joint of the study's declared answer and evidence roles (its spec's ``answer_metric`` / "
    "``evidence_metric``): 1 if both measures are 1, else 0; NaN if either is NaN, no value if either has none. "
    "An own study's row scorer joins its two roles; a task builder names the same pair on each row "
    "(``task.meta[\"answer_measure\"]`` / ``[\"evidence_measure\"]``; the synthetic study: "
    "``synthetic_ans`` / ``synthetic_evid_exact_set``), defaults ``ans_contains`` / ``evid_exact_set``. "
    "A study that lists it declares that pair (``tests/scoring/test_measure_columns.py``)."))(f.joint(lookup=get))


@measure("refusal", kind="other", label="refusal", section="EBG App. E.2")
def refusal(task, response) -> float:
    """1 if the parsed answer is an explicit non-answer (NA, unknown, cannot be determined …;
    :func:`lcrag.scoring.answer.is_refusal`), else 0."""
    return float(is_refusal(response.answer))
