"""NoLiMa single-needle groups in the custom item schema (:mod:`lcrag.experiment.convert` says what carries
over; EBG §4.2). NoLiMa text keeps its Adobe Research License (``metadata.license``)."""

from __future__ import annotations

from ...chunking.sentences import split_sentences
from ...experiment.convert import schema_doc, whole_evidence
from .data import DEFAULT_TEST, LICENSE_NOTE, load_nolima


def from_nolima(length: int = 10_000, *, hop: str = "onehop", lines_per_doc: int = 20, groups=None, data_dir=None,
                generated: bool | None = None) -> tuple[list[dict], list[dict]]:
    """NoLiMa single-needle groups over one haystack length in the custom schema (see module doc).

    Each group uses test ``T01_C02`` when it has it, else its first test; ``groups`` restricts
    the groups (e.g. ``lcrag.studies.nolima.data.PAPER_NEEDLES``).
    """
    data = load_nolima(data_dir, generated=generated)
    lic = LICENSE_NOTE if data.source == "data" else data.note
    hay = data.haystack(length)
    docs = [schema_doc(f"hay-{i // lines_per_doc:04d}", "\n".join(hay[i:i + lines_per_doc]), license=lic)
            for i in range(0, len(hay), lines_per_doc)]
    hay_ids = [d["id"] for d in docs]
    items = []
    for gid, g in sorted(data.needles.items()):
        if groups is not None and gid not in set(groups):
            continue
        needle, qs, char = g.fill(DEFAULT_TEST if DEFAULT_TEST in g.tests else sorted(g.tests)[0])
        if hop not in qs:
            continue
        nd = schema_doc(f"needle-{gid}", needle, license=lic)
        if not split_sentences(needle):
            continue
        docs.append(nd)
        items.append({"id": f"{gid}-{hop}", "question": qs[hop], "answers": [char], "doc_ids": hay_ids + [nd["id"]],
                      "evidence": [whole_evidence(nd, "needle")], "metadata": {"group": gid, "hop": hop, "source": data.source,
                                                                         "license": lic}})
    return docs, items
