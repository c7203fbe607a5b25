"""NoLiMa long-context condition (EBG paper §4.2, §5.1.2, App. C; data README §6.2).

Builds ``(Item, Context)`` pairs:

* **SN** — one needle (test ``T01_C02`` args, Yuki for 0402*, Stuart for 0405*) inserted into
  the haystack lines at ``int(len(lines) * depth)``; lines numbered from **0** and rendered
  ``"i: text"``; the gold line is the needle's 0-based index.
* **TN / CTN** — the primary needle inserted first at depth 0.5, then the secondary at
  ``int(len(lines_with_primary) * depth)``; gold lines are both needles' final numbers
  (the secondary insert may shift the primary by one, as upstream).

Depths follow the upstream runner, ``numpy.linspace(0, 100, 4) / 100`` = 0, 1/3, 2/3, 1
(labelled 0/33/67/100 in every table). README §6.2 writes them rounded as .33/.67; with
``int()`` the two differ for long haystacks, so the exact thirds are the default.

Prompts come from the needle set's own ``system_prompt`` / ``task_template`` (``str.format``
with ``{{``/``}}`` escapes, as upstream). The answer-only variant (RQ2, Fig. 1) drops the
citation request from both, exactly as LC-EBG's answer-only runner does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .data import DEFAULT_TEST, NeedleGroup, NoLiMaData, TwoNeedle
from ...contexts.haystack import SourceLine, render_numbered
from ...types import Context, Evidence, Item

DEPTHS = (0.0, 1 / 3, 2 / 3, 1.0)
PRIMARY_DEPTH = 0.5
HOPS = ("onehop", "twohop")


def depth_label(depth: float) -> int:
    """Percent label of a depth (1/3 -> 33)."""
    return int(round(depth * 100))


def insert_positions(n_lines: int, depth: float) -> int:
    """0-based insertion index ``int(n_lines * depth)`` (README §6.2), clipped to ``[0, n_lines]``."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be in [0, 1], got {depth}")
    return max(0, min(int(n_lines * depth), n_lines))


def design_cell(setting: str, hop: str, length: int, mode: str = "LC") -> str:
    """An item's cell of the NoLiMa design, ``"LC SN twohop 10000"``: the mode (LC or RAG), setting, hop and
    haystack length (characters) that each value of Figures 1-3, 5-7, 11-12 and Tables 12, 15 is read at; the
    needles and depths of a cell are its replicates. It is the item's ``cell`` metadata, so ``--limit N``
    (:mod:`lcrag.experiment.runcontrols`) keeps the first ``N`` items of every mode, setting, hop and length rather
    than the first ``N`` of the whole study."""
    return f"{mode} {setting} {hop} {length}"


def _render(lines: Sequence[SourceLine], condition: str, meta: dict, gold_roles=("needle",)) -> Context:
    return render_numbered(lines, base=0, condition=condition, gold_roles=gold_roles, metadata=meta)


def sn_case(haystack: Sequence[str], group: NeedleGroup, hop: str, depth: float, length: int, *,
            test: str = DEFAULT_TEST, character: str | None = None, source: str = "data") -> tuple[Item, Context]:
    """One single-needle LC case; the needle's 0-based line number is the only gold line."""
    needle, questions, char = group.fill(test, character)
    src = [SourceLine(t, doc_id="haystack", source_line=i) for i, t in enumerate(haystack)]
    pos = insert_positions(len(src), depth)
    src.insert(pos, SourceLine(needle, doc_id=f"needle:{group.id}", role="needle"))
    d = depth_label(depth)
    meta = {"setting": "SN", "needle_id": group.id, "hop": hop, "depth": d, "context_length": length,
            "character": char, "test": test, "needle_line": pos, "n_lines": len(src), "source": source}
    ctx = _render(src, f"LC-{length}", meta)
    item = Item(id=f"SN:{group.id}:{hop}:{length}:d{d}", question=questions[hop], answers=(char,),
                evidence=(Evidence(f"needle:{group.id}", needle, label="needle"),),
                metadata={**meta, "cell": design_cell("SN", hop, length)})
    return item, ctx


def two_needle_case(haystack: Sequence[str], pair: TwoNeedle, depth: float, length: int, *, setting: str = "TN",
                    primary_depth: float = PRIMARY_DEPTH, source: str = "data") -> tuple[Item, Context]:
    """One TN/CTN LC case: primary at ``primary_depth``, secondary at ``depth`` (after the primary)."""
    primary = pair.primary_filled
    src = [SourceLine(t, doc_id="haystack", source_line=i) for i, t in enumerate(haystack)]
    src.insert(insert_positions(len(src), primary_depth), SourceLine(primary, doc_id=f"needle:{pair.id}", role="primary"))
    src.insert(insert_positions(len(src), depth), SourceLine(pair.secondary_needle, doc_id=f"needle:{pair.id}", role="secondary"))
    p_line = next(i for i, s in enumerate(src) if s.role == "primary")
    s_line = next(i for i, s in enumerate(src) if s.role == "secondary")
    d = depth_label(depth)
    meta = {"setting": setting, "needle_id": pair.base_id, "pair_id": pair.id, "hop": "twohop", "depth": d,
            "primary_depth": depth_label(primary_depth), "context_length": length, "character": pair.character,
            "primary_line": p_line, "secondary_line": s_line, "n_lines": len(src), "source": source}
    ctx = _render(src, f"LC-{length}", meta, gold_roles=("primary", "secondary"))
    item = Item(id=f"{setting}:{pair.base_id}:twohop:{length}:d{d}", question=pair.question,
                answers=(pair.expected_answer,),
                evidence=(Evidence(f"needle:{pair.id}", primary, label="primary"),
                          Evidence(f"needle:{pair.id}", pair.secondary_needle, label="secondary")),
                metadata={**meta, "cell": design_cell(setting, "twohop", length)})
    return item, ctx


def ebg_messages(group: NeedleGroup, haystack: str, question: str) -> list[dict[str, str]]:
    """EBG chat messages from the needle set's own templates (system + user)."""
    return [{"role": "system", "content": group.system_prompt},
            {"role": "user", "content": group.task_template.format(haystack=haystack, question=question)}]


_CITE_SYS = " and provide a reference. Your answer should cite all lines the answer is based on."
_CITE_TPL = " and all lines the answer is based on in json format"
_JSON_EX = '{{\n  "lines": [25, 412],\n  "answer": "John",\n}}'


def answer_only_templates(group: NeedleGroup) -> tuple[str, str]:
    """(system, template) of the answer-only prompt derived from the needle set's EBG templates:
    the citation request and the ``lines`` field are removed, nothing else changes (LC-EBG
    ``run_answer_only.py``). Raises ValueError when the templates do not have that shape."""
    sys_p, tpl = group.system_prompt, group.task_template
    if _CITE_SYS not in sys_p or _CITE_TPL not in tpl or _JSON_EX not in tpl:
        raise ValueError(f"needle group {group.id}: EBG templates not in the expected form; cannot derive answer-only")
    return (sys_p.replace(_CITE_SYS, "."),
            tpl.replace(_CITE_TPL, " in json format").replace(_JSON_EX, '{{\n  "answer": "John"\n}}'))


def answer_only_messages(group: NeedleGroup, haystack: str, question: str) -> list[dict[str, str]]:
    sys_p, tpl = answer_only_templates(group)
    return [{"role": "system", "content": sys_p},
            {"role": "user", "content": tpl.format(haystack=haystack, question=question)}]


def lc_cases(data: NoLiMaData, lengths: Iterable[int], *, settings: Sequence[str] = ("SN",),
             needles: Sequence[str] | None = None, hops: Sequence[str] = HOPS,
             depths: Sequence[float] = DEPTHS, per_cell: int | None = None) -> list[tuple[Item, Context, NeedleGroup]]:
    """All LC cases for ``lengths`` x settings; SN over needles x hops x depths, TN/CTN over
    pairs x depths (two-hop only). Returns ``(item, context, group_for_templates)``.

    ``per_cell``: only the first ``per_cell`` cases of each design cell (:func:`design_cell`), in this order — the
    cases a per-cell ``--limit`` keeps — and the others are not built (their haystack copies are most of the time).
    :func:`case_keys` lists the whole set without building it."""
    taken: dict[str, int] = {}

    def wanted(setting: str, hop: str, length: int) -> bool:
        if per_cell is None:
            return True
        cell = design_cell(setting, hop, length)
        taken[cell] = taken.get(cell, 0) + 1
        return taken[cell] <= per_cell

    out, hays = [], {}
    for L, setting, nid, hop, d, pair in case_keys(data, lengths, settings, needles, hops, depths):
        if not wanted(setting, hop, L):
            continue
        if L not in hays:
            hays[L] = data.haystack(L)
        hay = hays[L]
        if pair is None:
            it, cx = sn_case(hay, data.needles[nid], hop, d, L, source=data.source)
        else:
            it, cx = two_needle_case(hay, pair, d, L, setting=setting, source=data.source)
        out.append((it, cx, data.needles[nid]))
    return out


def case_keys(data: NoLiMaData, lengths: Iterable[int], settings: Sequence[str] = ("SN",),
              needles: Sequence[str] | None = None, hops: Sequence[str] = HOPS, depths: Sequence[float] = DEPTHS):
    """``(length, setting, needle id, hop, depth, two-needle pair or None)`` of every LC case :func:`lc_cases`
    builds, in its order; nothing is built."""
    ids = list(needles) if needles is not None else [g for g in data.needles if g in _paper_or_generated(data)]
    for L in lengths:
        for setting in settings:
            if setting == "SN":
                for nid in ids:
                    for hop in hops:
                        for d in depths:
                            yield L, setting, nid, hop, d, None
            else:
                pairs = data.two_needle if setting == "TN" else data.contradictory
                for pair in pairs:
                    if pair.base_id in ids:
                        for d in depths:
                            yield L, setting, pair.base_id, "twohop", d, pair


def _paper_or_generated(data: NoLiMaData) -> tuple[str, ...]:
    from .data import GENERATED_CHARACTER, PAPER_NEEDLES
    return tuple(GENERATED_CHARACTER) if data.source == "generated" else PAPER_NEEDLES
