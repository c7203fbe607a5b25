"""NoLiMa needle sets and haystacks (EBG paper §4.2, App. C; data README §2.1–2.2).

Loads the LC-EBG subset of NoLiMa from the data directory:

* ``needle_set.json`` — single-needle (SN) groups ``{id, needle, questions{hop: text},
  tests{T..: {input_args}}, character_set, system_prompt, task_template}``;
* ``two_needle_set.json`` / ``contradictory_two_needle_set.json`` — TN / CTN pairs
  ``{id, primary_needle, secondary_needle, question, character, expected_answer}``;
* ``derived/nolima_rand_book_1_haystacks/rand_shuffle_<N>__rand_book_1.txt`` — haystack
  ``rand_book_1`` at 19 lengths; lines = file stripped and split on ``\\n`` (upstream
  ``load_haystack``), numbered from 0 in LC prompts.

When the data directory is absent, :func:`load_nolima` returns the project's own generated
needles (:func:`generated_needles`, same structure, different facts) and deterministic
English-like filler haystacks (:func:`generate_haystack`), labelled ``source="generated"`` so
every table and figure can say so. The generated set is lcrag's own (MIT), not NoLiMa.

License: NoLiMa needles and haystacks are under the Adobe Research License (non-commercial
research only; the license text must accompany redistribution) — see :data:`LICENSE_NOTE`.
Keep that note beside anything derived from them (tables, figures, notebooks).
"""

from __future__ import annotations

from ... import provenance as _provenance

import random
from dataclasses import dataclass, field
from pathlib import Path

from ...config import data_dir as _data_dir
from ...errors import InputError
from ...files.textio import read_text
from ...data.jsonpos import read_json_positions

LICENSE_FILE = "lc-ebg/LICENSE-NoLiMa-AdobeResearch.md"
LICENSE_NOTE = ("NOTICE: derived from NoLiMa (Modarressi et al. 2025) via LC-EBG; Adobe Research License, "
                "non-commercial research only — see " + LICENSE_FILE + " in the data directory.")
GENERATED_NOTE = "generated fixture data (lcrag's own needles and filler text) — not the real NoLiMa benchmark"
NEEDLESET_DIR = "lc-ebg/datasets/NoLiMa/needlesets"
HAYSTACK_DIR = "lc-ebg/derived/nolima_rand_book_1_haystacks"
HAYSTACK_LENGTHS = (*range(10_000, 100_001, 10_000), *range(200_000, 1_000_001, 100_000))
#: Fixed character per needle group (seed §5.1.2: Yuki for 0402*, Stuart for 0405*).
NEEDLE_CHARACTER = {"0402": "Yuki", "0402Inv": "Yuki", "0405": "Stuart", "0405Inv": "Stuart"}
PAPER_NEEDLES = ("0402", "0402Inv", "0405", "0405Inv")
DEFAULT_TEST = "T01_C02"


@dataclass(frozen=True)
class NeedleGroup:
    """One SN needle group; ``tests`` maps a test id to its input arguments ``{1}``, ``{2}`` …"""

    id: str
    needle: str
    questions: dict[str, str]
    tests: dict[str, tuple[str, ...]]
    character_set: tuple[str, ...]
    system_prompt: str
    task_template: str
    reasoning_type: str = ""

    def fill(self, test: str = DEFAULT_TEST, character: str | None = None) -> tuple[str, dict[str, str], str]:
        """Needle text and questions with ``{CHAR}`` and test args substituted.

        Returns ``(needle, {hop: question}, character)``; the character defaults to
        :data:`NEEDLE_CHARACTER` for the paper's groups, else the first of ``character_set``.
        """
        if test not in self.tests:
            raise KeyError(f"needle group {self.id} has no test {test!r}; known: {sorted(self.tests)}")
        char = character or NEEDLE_CHARACTER.get(self.id) or self.character_set[0]
        needle, qs = self.needle, dict(self.questions)
        for i, arg in enumerate(self.tests[test], start=1):
            needle = needle.replace("{%d}" % i, arg)
            qs = {h: q.replace("{%d}" % i, arg) for h, q in qs.items()}
        return needle.replace("{CHAR}", char), {h: q.replace("{CHAR}", char) for h, q in qs.items()}, char


@dataclass(frozen=True)
class TwoNeedle:
    """A TN or CTN pair (App. C.3/C.4): primary needle with ``{CHAR}``, secondary fact, question."""

    id: str
    primary_needle: str
    secondary_needle: str
    question: str
    character: str
    expected_answer: str
    reasoning_type: str = ""

    @property
    def primary_filled(self) -> str:
        return self.primary_needle.replace("{CHAR}", self.character)

    @property
    def base_id(self) -> str:
        """The SN group the primary needle comes from (``TN_0402Inv`` -> ``0402Inv``)."""
        return self.id.split("_", 1)[1] if "_" in self.id else self.id


@dataclass
class NoLiMaData:
    """Needle sets plus a haystack source. ``source`` is ``"data"`` or ``"generated"``."""

    needles: dict[str, NeedleGroup]
    two_needle: tuple[TwoNeedle, ...]
    contradictory: tuple[TwoNeedle, ...]
    source: str
    root: Path | None = None
    note: str = ""
    _haystacks: dict[int, list[str]] = field(default_factory=dict, repr=False)

    @property
    def lengths(self) -> tuple[int, ...]:
        if self.source == "generated":
            return HAYSTACK_LENGTHS
        return tuple(n for n in HAYSTACK_LENGTHS if (self.root / HAYSTACK_DIR / haystack_filename(n)).is_file())

    def haystack(self, length: int) -> list[str]:
        """Haystack lines at ``length`` characters (cached)."""
        if length not in self._haystacks:
            if self.source == "generated":
                self._haystacks[length] = generate_haystack(length)
            else:
                self._haystacks[length] = load_haystack(self.root / HAYSTACK_DIR / haystack_filename(length))
        return self._haystacks[length]


def haystack_filename(length: int) -> str:
    return f"rand_shuffle_{length}__rand_book_1.txt"


def _str(path, rec: dict, i: int, key: str, *, optional: bool = False, line: int | None = None) -> str:
    v = rec.get(key)
    if v is None and optional:
        return ""
    if not isinstance(v, str) or not v:
        raise InputError(path, "missing or not a non-empty string", line=line, field=f"[{i}].{key}")
    return v


def _unique(path, out: list, line: int, i: int) -> None:
    """Duplicate group ids would silently replace each other in ``NoLiMaData.needles``."""
    if any(o.id == out[-1].id for o in out[:-1]):
        raise InputError(path, f"duplicate id {out[-1].id!r}", line=line, field=f"[{i}].id")


def load_needle_set(path: str | Path) -> list[NeedleGroup]:
    """Load ``needle_set.json`` (a JSON list of SN groups); InputError names the record's line and field."""
    out = []
    for i, rec, line in read_json_positions(path, "array"):
        if not isinstance(rec, dict):
            raise InputError(path, "expected an object", line=line, field=f"[{i}]")
        qs, tests, chars = rec.get("questions"), rec.get("tests"), rec.get("character_set")
        if not isinstance(qs, dict) or not qs or not all(isinstance(v, str) for v in qs.values()):
            raise InputError(path, "expected a mapping hop -> question text", line=line, field=f"[{i}].questions")
        if not isinstance(tests, dict) or not all(isinstance(t, dict) and isinstance(t.get("input_args"), list)
                                                  for t in tests.values()):
            raise InputError(path, "expected {test_id: {input_args: [...]}}", line=line, field=f"[{i}].tests")
        if not isinstance(chars, list) or not chars or not all(isinstance(c, str) for c in chars):
            raise InputError(path, "expected a non-empty list of names", line=line, field=f"[{i}].character_set")
        tmpl = _str(path, rec, i, "task_template", line=line)
        if "{haystack}" not in tmpl or "{question}" not in tmpl:
            raise InputError(path, "must contain {haystack} and {question}", line=line, field=f"[{i}].task_template")
        out.append(NeedleGroup(
            id=_str(path, rec, i, "id", line=line), needle=_str(path, rec, i, "needle", line=line), questions=dict(qs),
            tests={k: tuple(str(a) for a in v["input_args"]) for k, v in tests.items()},
            character_set=tuple(chars), system_prompt=_str(path, rec, i, "system_prompt", line=line),
            task_template=tmpl, reasoning_type=_str(path, rec, i, "reasoning_type", optional=True, line=line)))
        _unique(path, out, line, i)
    return out


def load_two_needle_set(path: str | Path) -> list[TwoNeedle]:
    """Load ``two_needle_set.json`` or ``contradictory_two_needle_set.json``."""
    out = []
    for i, rec, line in read_json_positions(path, "array"):
        if not isinstance(rec, dict):
            raise InputError(path, "expected an object", line=line, field=f"[{i}]")
        prim = _str(path, rec, i, "primary_needle", line=line)
        if "{CHAR}" not in prim:
            raise InputError(path, "primary needle must contain {CHAR}", line=line, field=f"[{i}].primary_needle")
        s = lambda key, optional=False: _str(path, rec, i, key, optional=optional, line=line)  # noqa: E731
        out.append(TwoNeedle(
            id=s("id"), primary_needle=prim, secondary_needle=s("secondary_needle"), question=s("question"),
            character=s("character"), expected_answer=s("expected_answer"), reasoning_type=s("reasoning_type", True)))
        _unique(path, out, line, i)
    return out


def load_haystack(path: str | Path) -> list[str]:
    """Haystack lines: the file stripped and split on ``\\n`` (upstream ``load_haystack``)."""
    try:
        text = read_text(path)
    except OSError as e:
        raise InputError(path, f"cannot read haystack: {e.strerror or e}") from None
    lines = text.strip().split("\n")
    if not text.strip():
        raise InputError(path, "empty haystack", line=1)
    return lines


def load_nolima(data_dir: str | Path | None = None, *, generated: bool | None = None) -> NoLiMaData:
    """Needle sets and haystacks from the data directory, else lcrag's generated set.

    Args:
        data_dir: explicit data directory (default ``lcrag.config.data_dir()``).
        generated: True forces the generated set; False requires the real data (error if
            absent); None (default) uses the real data when present.
    """
    root = None if generated else _data_dir(data_dir)
    present = root is not None and (root / NEEDLESET_DIR / "needle_set.json").is_file()
    if generated or (not present and generated is None):
        sn, tn, ctn = generated_needles()
        _provenance.note(f"NoLiMa: {GENERATED_NOTE}")
        return NoLiMaData({g.id: g for g in sn}, tuple(tn), tuple(ctn), "generated", None, GENERATED_NOTE)
    if not present:
        raise FileNotFoundError(f"NoLiMa needle sets not found under {root}/{NEEDLESET_DIR}")
    d = root / NEEDLESET_DIR
    _provenance.note("real data: NoLiMa needle sets and haystacks of the data directory")
    sn = load_needle_set(d / "needle_set.json")
    return NoLiMaData({g.id: g for g in sn}, tuple(load_two_needle_set(d / "two_needle_set.json")),
                      tuple(load_two_needle_set(d / "contradictory_two_needle_set.json")),
                      "data", root, LICENSE_NOTE)


# ---------------------------------------------------------------- generated stand-in (no data dir)
_EBG_SYSTEM = ("Your job is to answer the question entirely from the context and provide a reference. "
               "Your answer should cite all lines the answer is based on.")
_EBG_TEMPLATE = ("<context>{haystack}</context>\n\nAnswer the question based on information only from the context. "
                 "If the question is not answerable from the context, answer NA. Your response should comprise only "
                 "the answer (just the character name) and all lines the answer is based on in json format. "
                 "For example:\n```json\n{{\n  \"lines\": [25, 412],\n  \"answer\": \"John\",\n}}\n```\n\n"
                 "Question: {question}")
_GEN_CHARS = ("Mirela", "Torvald", "Anouk", "Bastian", "Ilse", "Corwin", "Leontyne", "Evander", "Saskia", "Tobiah")
#: generated group -> fixed character (mirrors :data:`NEEDLE_CHARACTER`).
GENERATED_CHARACTER = {"G01": "Mirela", "G01Inv": "Mirela", "G02": "Torvald", "G02Inv": "Torvald"}


def generated_needles() -> tuple[list[NeedleGroup], list[TwoNeedle], list[TwoNeedle]]:
    """lcrag's own needle groups with the NoLiMa structure: 2 families x (default, inverse),
    one-hop / two-hop questions with test ``T01_C02`` args, and TN / CTN pairs."""
    fams = {
        "G01": ("Then {CHAR} mentioned being allergic to peanuts since childhood.",
                "{CHAR} wrote that peanuts trigger a severe allergy, so none for them.",
                "Which character cannot eat {1}?", "Which character cannot eat {2}?", ("peanuts", "satay sauce"),
                "Satay sauce is a Southeast Asian sauce made from ground roasted peanuts.",
                "Tomato soup is a smooth soup thickened with a cup of ground roasted peanuts.", "tomato soup"),
        "G02": ("A note arrived from {CHAR}: \"I never touch gluten,\" it said.",
                "\"I never touch gluten,\" said the note that arrived from {CHAR}.",
                "Which character avoids {1}?", "Which character avoids {2}?", ("gluten", "sourdough bread"),
                "Sourdough bread is baked from fermented wheat flour, which contains gluten.",
                "Rice pudding is a dessert made mostly of wheat gluten and sugar.", "rice pudding"),
    }
    sn, tn, ctn = [], [], []
    for fam, (needle, inv, q1, q2, args, sec, contra, contra_item) in fams.items():
        for gid, text in ((fam, needle), (fam + "Inv", inv)):
            sn.append(NeedleGroup(gid, text, {"onehop": q1, "twohop": q2}, {DEFAULT_TEST: args}, _GEN_CHARS,
                                  _EBG_SYSTEM, _EBG_TEMPLATE, "generated_commonsense"))
            char = GENERATED_CHARACTER[gid]
            tn.append(TwoNeedle(f"TN_{gid}", text, sec, q2.replace("{2}", args[1]), char, char, "two_needle"))
            ctn.append(TwoNeedle(f"CTN_{gid}", text, contra, q2.replace("{2}", contra_item), char, char,
                                 "contradictory_two_needle"))
    return sn, tn, ctn


_W = {
    "name": "Harriet Osgood Linus Petronella Ambrose Winifred Cyril Maud Desmond Philippa Rowan Edwina".split(),
    "noun": ("lantern harbour letter orchard carriage ledger staircase window compass garden bridge river chapel "
             "mirror parlour meadow violin telegram attic cellar workshop lighthouse ferry market").split(),
    "adj": "old quiet narrow crooked silver distant dusty broad grey cold bright hollow".split(),
    "verb": "watched crossed opened studied mended followed described remembered ignored counted".split(),
}
_ADVS = ("slowly", "carefully", "again", "at last", "without a word", "in silence", "once more", "before dawn")
_SENT = ("The {adj} {noun} stood beside the {noun2}, and {name} {verb} it {adv}.",
         "{name} {verb} the {adj} {noun} {adv}.",
         "Nobody spoke of the {noun} after {name} {verb} the {noun2}.",
         "\"Look at the {noun},\" {name} said, and {name2} {verb} the {adj} {noun2} {adv}.",
         "By evening the {noun} was {adj}, and the {noun2} beyond it seemed {adj2}.",
         "{name} had {verb} every {noun} in the {adj} {noun2} {adv}.")


def _sentence(rng: random.Random) -> str:
    n, a, nm = _W["noun"], _W["adj"], _W["name"]
    return rng.choice(_SENT).format(adj=rng.choice(a), adj2=rng.choice(a), noun=rng.choice(n), noun2=rng.choice(n),
                                    name=rng.choice(nm), name2=rng.choice(nm), verb=rng.choice(_W["verb"]),
                                    adv=rng.choice(_ADVS))


def generate_haystack(length: int, seed: int = 0) -> list[str]:
    """Deterministic English-like filler lines whose ``"\\n"``-join is exactly ``length`` characters.

    Lines hold 1–4 sentences (like book paragraphs); no line mentions food, diets or the
    generated needle characters, so distractors never answer a generated question.
    """
    if length < 20:
        raise ValueError(f"haystack length must be >= 20, got {length}")
    rng = random.Random(f"lcrag-nolima-filler-{seed}-{length}")
    lines: list[str] = []
    total = -1  # length of "\n".join(lines)
    while True:
        line = " ".join(_sentence(rng) for _ in range(rng.randint(1, 4)))
        if total + 1 + len(line) >= length:
            break
        lines.append(line)
        total += len(line) + 1
    need = length - total - 1  # characters left for a final line
    if need >= 2:
        last = line[:need]
        lines.append(last[:-1] + "." if last.endswith(" ") else last)
    else:  # 0 or 1 character left: lengthen the previous line instead of a 1-character line
        lines[-1] += "." * (need + 1)
    return lines
