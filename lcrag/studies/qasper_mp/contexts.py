"""QASPER-MP contexts: paper cues, 11-paper LC haystacks and flat / structured RAG contexts.

Follows EBG paper App. E.1 and E.4:

* **Layout.** Each paper renders as ``<paper>``, ``<title>T</title>``, ``<abstract>A</abstract>``,
  then per section ``<section>name</section>`` and one line per non-empty paragraph, then
  ``</paper>``. By default as LC-EBG ``build_haystack.py::render_paper`` (``renderer="authors"``):
  title and paragraphs stripped (title falls back to the paper id), the abstract line only when
  the stripped abstract is non-empty, a section line for **every** section whose stripped name is
  non-empty — also a parent section without paragraphs and a name repeated by the next section —
  and none for an empty name; a paragraph is stripped only, so its inner line breaks stay inside
  its one numbered line (the rendered haystack then shows an unnumbered continuation, exactly as
  theirs ``"\\n".join(f"{i}: {ln}")``). ``renderer="lcrag"`` is lcrag's former layout (inner
  whitespace collapsed, always an abstract line, a section line only before its first paragraph
  and when the name changes). All lines are numbered ``"<n>: <line>"`` from 0; every tag line (and RAG's
  ``[CHUNK r | title]`` and ``...`` lines) is **structural: numbered but not citable**
  (``Line.citable=False``). ``Context.metadata["para_text"]`` maps each paragraph line number to
  the paragraph's original text (what Evidence-F1 compares).
* **Gold lines.** A reference evidence string maps to a line of the gold paper's region as
  LC-EBG ``build_haystack.py::find_paragraph``: exact match of the stripped string, else the
  string inside a line, else a non-empty line inside the string, else a line starting with its
  first 80 characters; ``gold_lines`` is the union over annotators, ``metadata["gold_by_ref"]``
  keeps them per annotator and ``metadata["gold_texts_by_ref"]`` the mapped lines' **rendered
  texts** (theirs ``evidence_texts``), which Evidence-F1 compares with the rendered texts of the
  cited lines (``run_baseline.py``: ``paragraph_texts[i]``), so whitespace never separates a
  cited gold line from its evidence. An annotator whose evidence strings all fail to map is left
  out (``metadata["kept_refs"]``), as theirs skips that annotation.
* **Cues** (App. E.1): the cue type is chosen by the parity of md5(question_id) (LC-EBG
  ``disambiguate_questions_v2.py::use_author``; ``cue_hash="sha256"`` is lcrag's former rule): even ->
  author cue ("Smith" / "Smith and Doe" / "Smith et al."), odd -> title cue, a verbatim 2–3 word
  substring of the title picked by the same hash among candidates that neither start nor end
  with a stopword and, when possible, do not occur in another paper's title (the paper let
  GPT-5 pick; lcrag's rule is deterministic and model-free).
  Without author metadata an author cue falls back to the title cue (recorded).
* **Structured RAG** (App. E.4): retrieved paragraphs are grouped by paper (papers in order of
  their best rank), sorted by paragraph index, and any gap (abstract -> paragraph k > 0, or
  paragraph i -> j > i + 1) is marked by one ``...`` line.
* **Protocols** (App. E.4): ``protocol="final"`` is the above (the paper's main results);
  ``protocol="first-iteration"`` is the paper's first iteration: no ``...`` markers and every line citable
  (title, abstract, section and chunk-header lines too; they still cannot match gold, so citing them lowers
  Evidence-F1), to be read with the prompt without the citation-eligibility rule (``ebg_qasper_first``).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence

from .data import Paper, Question
from ...contexts.haystack import SourceLine, render_numbered
from ...types import Chunk, Context


def Row(text: str, doc_id: str = "", start: int = -1, end: int = -1, source_line: int = -1, *,
        citable: bool = True, role: str = "sentence") -> SourceLine:
    """A line before numbering (``lcrag.contexts.haystack.SourceLine``)."""
    return SourceLine(text, doc_id, start, end, source_line, role=role, citable=citable)


def render(rows, *, condition: str = "", metadata: dict | None = None, base: int = 0) -> Context:
    """Number every row from ``base`` and render ``"<n>: <text>"`` one per line (structural rows too)."""
    return render_numbered(rows, base=base, condition=condition, metadata=metadata, gold_roles=(),
                           number_structural=True)


STOPWORDS = frozenset("a an the of for in on with without within to and or via by from at is are using towards toward into "
                      "over under through about between beyond than versus vs as "
                      "its their our we do does how what when can".split())
_EDGE = " \t:;,.!?()[]{}\"'“”‘’"


def qhash(question_id: str) -> int:
    return int(hashlib.sha256(question_id.encode("utf-8")).hexdigest(), 16)


def cue_parity_hash(question_id: str, cue_hash: str = "md5") -> int:
    """The integer whose parity picks the cue type: md5 as the authors' code (default), or sha256."""
    if cue_hash not in ("md5", "sha256"):
        raise ValueError(f"cue_hash must be 'md5' or 'sha256', got {cue_hash!r}")
    return int(hashlib.new(cue_hash, question_id.encode("utf-8")).hexdigest(), 16)


def surname(name: str) -> str:
    """Surname of "Last, First" (part before the comma) or "First [Middle] Last" (last word)."""
    name = name.strip()
    if "," in name:
        return name.split(",", 1)[0].strip()
    words = [w for w in name.split() if w.rstrip(".").lower() not in ("jr", "sr", "ii", "iii")]
    return words[-1] if words else name


def author_cue(authors: Sequence[str]) -> str:
    """1 author -> "Smith"; 2 -> "Smith and Doe"; >= 3 -> "Smith et al." (App. E.1)."""
    s = [surname(a) for a in authors]
    if len(s) == 1:
        return s[0]
    if len(s) == 2:
        return f"{s[0]} and {s[1]}"
    return f"{s[0]} et al."


def title_candidates(title: str) -> list[str]:
    """Verbatim 2- and 3-word substrings of ``title`` usable as cues (see module doc)."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", title)]
    out = []
    for n in (2, 3):
        for i in range(len(spans) - n + 1):
            words = [title[s:e].strip(_EDGE) for s, e in spans[i:i + n]]
            if any(not w or not re.search(r"[A-Za-z]", w) for w in words):
                continue
            if words[0].lower() in STOPWORDS or words[-1].lower() in STOPWORDS:
                continue
            sub = title[spans[i][0]:spans[i + n - 1][1]].strip(_EDGE)
            if ":" in sub or sub in out:
                continue
            out.append(sub)
    return out


def title_cue(title: str, question_id: str, other_titles: Sequence[str] = ()) -> str:
    """The hash-chosen candidate; candidates found (case-insensitively) in another paper's
    title are dropped first when any distinctive candidate remains."""
    cands = title_candidates(title)
    others = [t.lower() for t in other_titles if t != title]
    distinct = [c for c in cands if not any(c.lower() in t for t in others)]
    cands = distinct or cands
    if not cands:
        words = title.split()
        return " ".join(words[:3]).strip(_EDGE)
    return cands[(qhash(question_id) >> 1) % len(cands)]


def _lower_first(q: str) -> str:
    w = q.split(" ", 1)[0]
    return q[0].lower() + q[1:] if len(w) > 1 and w[0].isupper() and w[1:].islower() else q


def make_cue(q: Question, paper: Paper, authors: Sequence[str] | None, other_titles: Sequence[str] = (), *,
             cue_hash: str = "md5") -> dict:
    """``{cue_type, cue, question}`` with the disambiguated question (App. E.1)."""
    want = "author" if cue_parity_hash(q.question_id, cue_hash) % 2 == 0 else "title"
    if want == "author" and authors:
        cue = author_cue(authors)
        return {"cue_type": "author", "cue": cue, "question": f"In {cue}, {_lower_first(q.question)}"}
    cue = title_cue(paper.title, q.question_id, other_titles)
    typ = "title" if want == "title" else "title (no author metadata)"
    return {"cue_type": typ, "cue": cue, "question": f"In the {cue} paper, {_lower_first(q.question)}"}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _authors_paper_rows(paper: Paper) -> list[SourceLine]:
    """Full-paper rows as LC-EBG ``render_paper`` (module doc). Paragraph ``source_line`` is the
    paper-wide index of :meth:`Paper.paragraphs` (non-empty paragraphs in order)."""
    pid = paper.paper_id
    rows = [Row("<paper>", pid, citable=False, role="paper"),
            Row(f"<title>{(paper.title or pid).strip()}</title>", pid, citable=False, role="title")]
    if (paper.abstract or "").strip():
        rows.append(Row(f"<abstract>{paper.abstract.strip()}</abstract>", pid, citable=False, role="abstract"))
    k = 0
    for sec in paper.sections:
        name = (sec.name or "").strip()
        if name:
            rows.append(Row(f"<section>{name}</section>", pid, citable=False, role="section"))
        for par in sec.paragraphs:
            if par.strip():
                rows.append(Row(_para_line(par), pid, source_line=k, role="paragraph"))
                k += 1
    rows.append(Row("</paper>", pid, citable=False, role="paper"))
    return rows


RENDERERS = ("authors", "lcrag")


def _para_line(text: str) -> str:
    """A paragraph as one line the authors' way (``render_paper``: ``par.strip()``): stripped only,
    inner line breaks kept, so :func:`find_paragraph` matches a gold string that contains one."""
    return text.strip()


def paper_rows(paper: Paper, paragraphs: Sequence[int] | None = None, *, gaps: bool = False,
               renderer: str = "authors") -> list[SourceLine]:
    """Rows of one paper; ``paragraphs`` restricts to those indices (structured RAG, lcrag layout)."""
    if renderer not in RENDERERS:
        raise ValueError(f"renderer must be one of {RENDERERS}, got {renderer!r}")
    if renderer == "authors" and paragraphs is None:
        return _authors_paper_rows(paper)
    rows = [Row("<paper>", paper.paper_id, citable=False, role="paper"),
            Row(f"<title>{_one_line(paper.title)}</title>", paper.paper_id, citable=False, role="title"),
            Row(f"<abstract>{_one_line(paper.abstract)}</abstract>", paper.paper_id, citable=False, role="abstract")]
    keep = None if paragraphs is None else set(paragraphs)
    prev, section = -1, None
    for k, sec, text in paper.paragraphs():
        if keep is not None and k not in keep:
            continue
        if gaps and k != prev + 1:
            rows.append(Row("...", paper.paper_id, citable=False, role="gap"))
        if sec != section:
            rows.append(Row(f"<section>{_one_line(sec)}</section>", paper.paper_id, citable=False, role="section"))
            section = sec
        rows.append(Row(_para_line(text) if renderer == "authors" else _one_line(text), paper.paper_id, source_line=k,
                        role="paragraph"))
        prev = k
    rows.append(Row("</paper>", paper.paper_id, citable=False, role="paper"))
    return rows


def find_paragraph(ev: str, region: Sequence[tuple[int, str]]) -> int | None:
    """Line number of evidence string ``ev`` among ``region`` = ``(number, rendered text)`` of the
    gold paper's lines, in order (follows LC-EBG ``build_haystack.py::find_paragraph``): exact
    match of the stripped string, ``ev`` inside a line, a non-empty line inside ``ev``, a line
    starting with ``ev``'s first 80 characters; None when nothing matches or ``ev`` is blank."""
    e = ev.strip()
    if not e:
        return None
    for test in (lambda t: t == e, lambda t: e in t, lambda t: bool(t) and t in e, lambda t: t.startswith(e[:80])):
        for n, t in region:
            if test(t):
                return n
    return None


def _finish(rows: list[SourceLine], q: Question, papers: dict[str, Paper], condition: str, meta: dict):
    ctx = render(rows, condition=condition, metadata=meta)
    # Evidence-F1 compares rendered line texts on both sides (module doc)
    para = {ln.number: ln.text for ln in ctx.lines if ln.role == "paragraph"}
    region = [(ln.number, ln.text) for ln in ctx.lines if ln.doc_id == q.paper_id]
    gold_by_ref, texts_by_ref, kept, unmapped = [], [], [], 0
    for i, ref in enumerate(q.references):
        lines = []
        for ev in ref.evidence:
            n = find_paragraph(ev, region)
            if n is None:
                unmapped += 1
            else:
                lines.append(n)
        gold_by_ref.append(sorted(set(lines)))
        texts_by_ref.append([ctx.line(n).text for n in lines])
        if not (ref.evidence and not lines):  # theirs: evidence given but none mapped -> annotation skipped
            kept.append(i)
    gold = tuple(sorted({n for g in gold_by_ref for n in g}))
    ctx.metadata.update(para_text=para, gold_by_ref=gold_by_ref, gold_texts_by_ref=texts_by_ref,
                        kept_refs=kept, unmapped_evidence=unmapped)
    return type(ctx)(ctx.text, ctx.lines, gold, ctx.numbering_base, ctx.condition, ctx.metadata)


def pool_papers(q: Question, papers: dict[str, Paper], n_distractors: int = 10, seed: int = 0) -> list[str]:
    """Gold paper + ``n_distractors`` drawn uniformly from the other papers, shuffled; the RNG is
    ``Random(sha256(f"{seed}:{question_id}"))`` so a question's pool does not depend on the sample."""
    rng = random.Random(qhash(f"{seed}:{q.question_id}"))
    others = sorted(p for p in papers if p != q.paper_id)
    pool = [q.paper_id] + rng.sample(others, min(n_distractors, len(others)))
    rng.shuffle(pool)
    return pool


PROTOCOLS = ("final", "first-iteration")


def _protocol_rows(rows: list[SourceLine], protocol: str) -> list[SourceLine]:
    """Rows under ``protocol`` (module doc): unchanged for ``final``, every line citable for ``first-iteration``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if protocol == "final":
        return rows
    from dataclasses import replace

    return [r if r.citable else replace(r, citable=True) for r in rows]


def lc_context(q: Question, papers: dict[str, Paper], pool: Sequence[str], *, protocol: str = "final"):
    rows = _protocol_rows([r for pid in pool for r in paper_rows(papers[pid])], protocol)
    return _finish(rows, q, papers, "LC", {"pool": list(pool), "protocol": protocol})


def paragraph_chunks(papers: dict[str, Paper], *, title_in_chunk: bool = False) -> list[Chunk]:
    """One chunk per non-empty body paragraph (``metadata["para"]`` = paper-wide index); with
    ``title_in_chunk`` the indexed text is ``"title\\n\\nparagraph"`` (App. E.7)."""
    out = []
    for pid, p in papers.items():
        off = 0
        for k, sec, text in p.paragraphs():
            out.append(Chunk(id=f"{pid}:para:{k}", doc_id=pid, text=text, start=off, end=off + len(text),
                             title=p.title, rendered=f"{p.title}\n\n{text}" if title_in_chunk else "",
                             metadata={"para": k, "section": sec}))
            off += len(text) + 1
    return out


def rag_context(q: Question, papers: dict[str, Paper], hits: Sequence[Chunk], k: int, layout: str, condition: str, *,
                protocol: str = "final"):
    """Flat (``[CHUNK r | title]`` + paragraph, rank order) or structured (per-paper XML; gap markers under the
    ``final`` protocol only, see the module doc's protocols)."""
    hits = list(hits[:k])
    if layout == "flat":
        rows = []
        for r, c in enumerate(hits, 1):
            rows.append(Row(f"[CHUNK {r} | {_one_line(c.title)}]", c.doc_id, citable=False, role="chunk_header"))
            rows.append(Row(_para_line(c.text), c.doc_id, source_line=c.metadata["para"], role="paragraph"))
    elif layout == "struct":
        order: dict[str, list[int]] = {}
        for c in hits:
            order.setdefault(c.doc_id, []).append(c.metadata["para"])
        rows = [r for pid, ks in order.items() for r in paper_rows(papers[pid], ks, gaps=protocol == "final")]
    else:
        raise ValueError(f"layout must be 'flat' or 'struct', got {layout!r}")
    return _finish(_protocol_rows(rows, protocol), q, papers, condition,
                   {"k": k, "chunk_ids": [c.id for c in hits], "protocol": protocol})
