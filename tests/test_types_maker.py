"""``positional_maker``: the fast constructor of frozen records equals the dataclass's own ``__init__``."""

from __future__ import annotations

import dataclasses

import pytest

from lcrag.contexts.haystack import SourceLine, make_source_line
from lcrag.types import Chunk, Line, make_line, positional_maker


def test_make_line_equals_line():
    vals = (7, "Anna lives in Oslo.", "doc-1", 10, 29, 3, False, "needle")
    a, b = make_line(*vals), Line(*vals)
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b) and type(a) is Line
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.number = 8


def test_make_source_line_follows_field_order():
    vals = ("a fact", "pool", -1, -1, 4, "distractor", True)
    assert make_source_line(*vals) == SourceLine(*vals)
    assert [f.name for f in dataclasses.fields(SourceLine)] == ["text", "doc_id", "start", "end", "source_line", "role", "citable"]


def test_every_field_is_required_positionally():
    with pytest.raises(TypeError):
        make_line(1, "text")  # no defaults: a field added to Line cannot be silently left unset


def test_refuses_records_it_cannot_build_faithfully():
    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self):
            if self.x < 0:
                raise ValueError

    @dataclasses.dataclass
    class Mutable:
        x: int

    for cls in (Checked, Mutable):
        with pytest.raises(TypeError):
            positional_maker(cls)
    assert positional_maker(Chunk)  # a frozen record without __post_init__ is fine
