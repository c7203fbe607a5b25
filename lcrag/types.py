"""Typed records shared by every part of lcrag.

Conventions used everywhere in the package:

* Character spans are half-open ``[start, end)`` offsets into ``Document.text``.
* Line numbers shown to a model (``Line.number``) follow the context's own numbering
  convention (``Context.numbering_base``: 0 for the LC haystacks of the EBG paper §4.1/§4.2,
  1 for the NoLiMa RAG vector store of App. G). Source line indices (``Line.source_line``)
  are always 0-based positions in the source document's line list.
* A record never needs to be re-derived downstream: chunks carry their document id,
  character span and line span; a context carries the map from rendered line numbers back
  to source lines; a response carries its raw text, parse status and cache key.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Document:
    """A source document: ``id``, ``text`` and optional ``title`` / ``metadata``."""

    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Line:
    """One line of a rendered context.

    Attributes:
        number: the line number as rendered to the model (see ``Context.numbering_base``).
        text: the line text without its ``"<number>: "`` prefix.
        doc_id: id of the source document ("" for generated lines such as headers).
        start: start character offset of ``text`` in the source document.
        end: end character offset (exclusive).
        source_line: 0-based index of this line in the source document's line list.
        citable: False for structural lines (headers, tags, ``...`` markers) that are not
            valid evidence (EBG paper App. E.4).
        role: free label, e.g. ``"distractor"``, ``"needle"``, ``"header"``.
    """

    number: int
    text: str
    doc_id: str = ""
    start: int = -1
    end: int = -1
    source_line: int = -1
    citable: bool = True
    role: str = ""


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit cut from a document, with full provenance.

    ``text == document.text[start:end]`` holds for chunks cut from a document (the
    title-in-chunk variant keeps the span of the body and stores the rendered text in
    ``rendered``); the one exception is a token window decoded the authors' way whose edge
    splits a character (``metadata["decoded"]``, see ``lcrag.chunking.tokens``). ``line_start``/``line_end`` are 0-based, inclusive source line indices.
    """

    id: str
    doc_id: str
    text: str
    start: int
    end: int
    line_start: int = -1
    line_end: int = -1
    title: str = ""
    rendered: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def display_text(self) -> str:
        """Text to index and show: ``rendered`` when set (title-in-chunk), else ``text``."""
        return self.rendered or self.text


@dataclass(frozen=True)
class Evidence:
    """A gold evidence unit: a span in a document (and, when known, its text)."""

    doc_id: str
    text: str
    start: int = -1
    end: int = -1
    label: str = ""


@dataclass(frozen=True)
class Item:
    """A question with gold answers and gold evidence.

    ``answers`` are accepted surface forms; how they are matched is the scorer's
    convention (exact, contains, normalised), never the item's.
    """

    id: str
    question: str
    answers: tuple[str, ...]
    evidence: tuple[Evidence, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Condition:
    """One context condition of a study: how the context of an item is built.

    The record is what a study's task builder constructs and what tables group by; its
    :attr:`label` is *derived* from the fields (never parsed back). ``name`` is the display
    label a study gives the condition when it is built (e.g. the papers' ``"RAG@5"`` or
    ``"LC-16K"``), set from these fields by the study's own label function; without it the
    canonical label joins the set fields.

    Attributes:
        mode: ``"LC"`` (long context), ``"RAG"`` (retrieved), ``"no_context"``, ``"oracle"``,
            ``"route"`` or a study's own mode.
        budget: context budget in **characters** (``int``), ``"full"`` or ``None``.
        k: retrieved units (chunks or lines) for RAG, ``None`` otherwise.
        chunker / retriever / layout / order / filler: registry names of the components used.
        depth: needle depth in ``[0, 1]`` for depth-placed LC haystacks.
        extra: further study-specific fields as sorted ``(name, value)`` pairs.
        name: the study's display label (see above).
    """

    mode: str
    budget: int | str | None = None
    k: int | None = None
    chunker: str | None = None
    retriever: str | None = None
    layout: str | None = None
    order: str | None = None
    filler: str | None = None
    depth: float | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    name: str | None = None

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        parts = [self.mode]
        for f in ("budget", "k", "chunker", "retriever", "layout", "order", "filler", "depth"):
            v = getattr(self, f)
            if v is not None:
                parts.append(f"{f}={v}")
        parts += [f"{k}={v}" for k, v in self.extra]
        return " ".join(parts)

    def fields(self) -> dict[str, Any]:
        """The set fields as a flat dict (``extra`` pairs included), for table columns."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("extra", "name") and getattr(self, f.name) is not None}
        out.update(dict(self.extra))
        return out

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> Condition:
        """The record from a mapping of its fields (a row's stored ``meta.condition``; ``extra`` as pairs)."""
        d = dict(fields)
        d["extra"] = tuple(tuple(x) for x in d.get("extra") or ())
        return cls(**d)

    @staticmethod
    def scheme(label: Callable[[Condition], str], order: Callable[[Condition], Any] | None = None) -> ConditionScheme:
        """A study's condition protocol (:class:`ConditionScheme`): ``label`` derives the display label from the
        fields, ``order`` the sort key of a condition."""
        return ConditionScheme(label, order)


class ConditionScheme:
    """One study's conditions: how each is labelled, ordered and looked up — the protocol every benchmark uses.

    * :meth:`make` / :meth:`name` build a :class:`Condition` named by ``label`` (derived from its fields, never
      parsed back) and record it, so a label the study made can be looked up later;
    * :meth:`lookup` turns a record, a stored mapping of fields (``meta.condition`` of a row) or a recorded label
      into the record;
    * :meth:`order` is the study's sort key of a condition (a record, mapping or label); without ``order`` the
      conditions keep the order they come in (every key is equal).
    """

    def __init__(self, label: Callable[[Condition], str], order: Callable[[Condition], Any] | None = None):
        self.label = label
        self._order = order
        self.by_label: dict[str, Condition] = {}

    def name(self, c: Condition) -> Condition:
        """``c`` with ``name`` set to its label, recorded for :meth:`lookup`."""
        c = dataclasses.replace(c, name=self.label(c))
        self.by_label[c.name] = c
        return c

    def make(self, mode: str, **fields: Any) -> Condition:
        """A named, recorded :class:`Condition` of ``mode`` and ``fields``."""
        return self.name(Condition(mode, **fields))

    def lookup(self, c: Condition | Mapping[str, Any] | str) -> Condition:
        """The record of ``c``: itself, from its fields, or the condition this scheme made with that label."""
        if isinstance(c, Condition):
            return c
        if isinstance(c, Mapping):
            return Condition.from_fields(c)
        try:
            return self.by_label[c]
        except KeyError:
            raise KeyError(f"no condition labelled {c!r} was made; made: {', '.join(self.by_label) or 'none'}") from None

    def order(self, c: Condition | Mapping[str, Any] | str) -> Any:
        """The study's sort key of ``c``."""
        return self._order(self.lookup(c)) if self._order else 0


@dataclass(frozen=True)
class Context:
    """A rendered context handed to a reader.

    Attributes:
        text: the exact text substituted into the prompt's ``{haystack}`` placeholder.
        lines: the rendered lines in order; ``lines[i].number`` is what the model sees.
        gold_lines: rendered numbers of the gold evidence lines (sorted).
        numbering_base: 0 or 1 — the number of the first line under plain numbering.
        condition: label of the condition, e.g. ``"LC-10000"`` or ``"RAG-bm25-k10"``.
        metadata: free provenance (length target, seed, depth, k, retriever …).
    """

    text: str
    lines: tuple[Line, ...]
    gold_lines: tuple[int, ...] = ()
    numbering_base: int = 0
    condition: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def line(self, number: int) -> Line | None:
        """Return the rendered line with this number, or None when it is not in the context."""
        idx = self._index().get(number)
        return None if idx is None else self.lines[idx]

    def _index(self) -> dict[int, int]:
        cache = self.__dict__.get("_number_index")
        if cache is None:
            cache = {ln.number: i for i, ln in enumerate(self.lines)}
            object.__setattr__(self, "_number_index", cache)
        return cache

    @property
    def n_chars(self) -> int:
        return len(self.text)


class ParseStatus:
    """Parse outcomes of a model response (string constants, stored in results)."""

    OK = "ok"  # strict JSON object with answer and lines
    REPAIRED = "repaired"  # needed lenient repair (fences stripped, quotes, trailing commas …)
    PARTIAL = "partial"  # only some fields recoverable (e.g. answer without lines)
    FAILED = "failed"  # nothing recoverable
    EMPTY = "empty"  # empty response text
    NOT_JSON = "not_json"  # answer-only prompts: raw text is the answer (not a failure)
    TRUNCATED = "truncated"  # the reply was cut by the output budget (finish_reason "length"), not a parse failure


class Outcome:
    """Outcome of one reader call."""

    OK = "ok"
    ERROR = "error"  # the call failed after retries (excluded from denominators)
    NA = "na"  # not sent: prompt exceeds the reader's context window
    SKIPPED = "skipped"


@dataclass
class Response:
    """A reader's response to one request.

    Attributes:
        raw: the raw text the model returned ("" on error).
        answer: parsed answer string (None when unparsed).
        lines: cited line numbers as rendered in the context (ints, deduplicated, in
            citation order).
        parse_status: one of ``ParseStatus``.
        outcome: one of ``Outcome``; ``error``/``na`` rows are excluded from denominators.
        error: reason for a failed call or parse.
        cache_key: content hash of the request (see ``lcrag.llm.cache``).
        cached: whether the response came from the cache.
        input_tokens / output_tokens: usage when the endpoint reports it.
    """

    raw: str = ""
    answer: str | None = None
    lines: list[int] = field(default_factory=list)
    parse_status: str = ParseStatus.FAILED
    outcome: str = Outcome.OK
    error: str = ""
    cache_key: str = ""
    cached: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    invalid_lines: list[Any] = field(default_factory=list)
    reasoning: str = ""  # reasoning text, kept apart from ``raw`` (see lcrag.llm.reasoning)
    reasoning_tokens: int = 0  # part of output_tokens
    finish_reason: str = ""
    prompt_tokens_own: int = -1  # prompt tokens under the reader's own tokenizer, chat template included
    cached_tokens: int = 0  # of input_tokens: read from the provider's prompt cache (lcrag.llm.billing)
    cache_write_tokens: int = 0  # of input_tokens: written to the provider's prompt cache
    batch: bool = False  # answered through a provider's batch API (priced at its batch discount)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Response":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class ResultRow:
    """One scored row: one item × condition × reader × prompt.

    ``metrics`` maps measure names — each measure's registered name is its column
    (``evid_exact_set``, ``synthetic_ans``, ``multihop_evid_all_located`` …; an own study adds the
    roles ``ans`` / ``evid`` / ``ans_evid``) — to 0/1 or fractional values; it is empty when the call failed or was
    N/A, and such rows are excluded from every denominator.

    Usage fields (absent in older results files, then their defaults): ``prompt_tokens`` /
    ``completion_tokens`` / ``reasoning_tokens`` as the endpoint reported them (reasoning
    tokens are part of the completion tokens); ``cost_usd`` — the price of that usage under the
    reader profile's prices, also for a cached row (what the recorded call cost; ``cached``
    says it was not paid again); ``latency_s`` — the recorded call's wall time, retries
    included; ``prompt_tokens_own`` — the prompt's tokens under the reader's own tokenizer
    (``tokenizer``), chat template included, -1 when not counted; ``context_chars`` —
    characters of the rendered context; ``reasoning`` — the reasoning text (its first 4,000 characters;
    the response cache keeps it whole). ``cache_key`` (the request
    fingerprint) and ``scorer_version`` decide whether a re-run may reuse the row
    (``lcrag.runtime.resume``). ``prompt_cached_tokens`` / ``prompt_cache_write_tokens`` — the part of
    ``prompt_tokens`` the provider reported as read from / written to its prompt cache
    (:mod:`lcrag.llm.billing`), which ``cost_usd`` prices at the cached / cache-write prices.
    """

    run: str
    item_id: str
    condition: str
    reader: str
    prompt: str
    outcome: str
    parse_status: str
    answer: str | None
    lines: list[int]
    gold_lines: list[int]
    metrics: dict[str, float]
    cache_key: str = ""
    error: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    prompt_tokens_own: int = -1
    tokenizer: str = ""
    context_chars: int = -1
    reasoning: str = ""
    scorer_version: str = ""  # version of the scorer that filled ``metrics`` (lcrag.runtime.resume.scorer_version)
    prompt_cached_tokens: int = 0
    prompt_cache_write_tokens: int = 0

    @property
    def task_id(self) -> str:
        return task_id(self.run, self.item_id, self.condition, self.reader, self.prompt, self.meta.get("sample", 0))

    def to_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``: the same plain, deep-copied dict (dataclasses inside ``meta``,
        such as a ``Condition``, become dicts), with a fast path for str/int/float/bool/None values."""
        return {name: _plain(getattr(self, name)) for name in _RESULT_FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ResultRow":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(ResultRow))
_LEAVES = (str, int, float, bool, type(None))


def _plain(v: Any) -> Any:
    """``dataclasses.asdict``'s conversion of one value (its ``_asdict_inner`` rules), immutable leaves
    returned as they are instead of through ``copy.deepcopy``."""
    if type(v) in _LEAVES:
        return v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, tuple) and hasattr(v, "_fields"):  # namedtuple
        return type(v)(*[_plain(x) for x in v])
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    if isinstance(v, dict):
        return type(v)((_plain(k), _plain(x)) for k, x in v.items())
    return copy.deepcopy(v)


def task_id(run: str, item_id: str, condition: str, reader: str, prompt: str, sample: int = 0) -> str:
    """Stable identity of a result row, used by resume. ``sample``: the 0-based repeat index of a run with
    ``repeats`` (:mod:`lcrag.experiment.repeats`); sample 0 keeps the identity of an unrepeated row."""
    ident = "|".join((run, item_id, condition, reader, prompt))
    return f"{ident}|s{int(sample)}" if sample else ident


def positional_maker(cls: type) -> Any:
    """A constructor of the frozen dataclass ``cls`` taking every field positionally, in declaration order.

    The object is equal (``==``, ``hash``, ``repr``) to ``cls(*values)``; the per-field
    ``object.__setattr__`` calls of a frozen dataclass's ``__init__`` are skipped — for haystack
    builders that number hundreds of thousands of lines (:func:`lcrag.contexts.haystack.render_numbered`;
    ``benchmarks/bench_synthetic.py``'s ``synthetic_line_records`` row: 1.5x ``Line(*values)``). Only for plain frozen dataclasses: every field in
    ``__init__``, no ``__post_init__`` and no ``__slots__`` (a ``TypeError`` otherwise).
    """
    fs = dataclasses.fields(cls)
    params = getattr(cls, "__dataclass_params__", None)
    if (params is None or not params.frozen or hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__
            or not all(f.init for f in fs)):
        raise TypeError(f"positional_maker needs a plain frozen dataclass, got {cls.__name__}")
    names = [f.name for f in fs]
    src = (f"def make({', '.join(names)}):\n"
           f"    o = _new(cls)\n"
           f"    _set(o, '__dict__', {{{', '.join(f'{n!r}: {n}' for n in names)}}})\n"
           f"    return o\n")
    ns: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "cls": cls}
    exec(src, ns)  # noqa: S102 - source built from the dataclass's own field names
    make = ns["make"]
    make.__doc__ = f"{cls.__name__}({', '.join(names)}), all positional (:func:`lcrag.types.positional_maker`)."
    return make


make_line = positional_maker(Line)
