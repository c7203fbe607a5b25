"""A retriever from its registry name: the one way studies and study files turn a name into a retriever."""

from __future__ import annotations

from collections.abc import Sequence

from .. import registry
from ..types import Chunk


def retriever_by_name(name: str, chunks: Sequence[Chunk], **params):
    """The registry's retriever ``name`` over ``chunks`` (``bm25``, ``minilm``, ``dense``, ``hybrid``
    or a plug-in's). A name that is not registered is taken as the model of the registry's
    ``dense`` retriever (a sentence-transformers path, or ``"openai:<model>"``, which needs a key)."""
    if name in registry.names("retriever"):
        return registry.get_retriever(name)(chunks, **params)
    return registry.get_retriever("dense")(chunks, model=name, **params)
