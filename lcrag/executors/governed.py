"""A reader whose calls pass a :class:`lcrag.executors.governor.Governor` (budget reservation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..llm import costs
from ..llm.client import CallResult
from ..llm.readers import Reader, ReadRequest
from ..llm.tokens import count_messages
from .governor import BUDGET_REFUSED


def price(reader: Reader, tokens_in: int, tokens_out: int, **usage: Any) -> float:
    """USD of one call under the reader profile's price list (:func:`lcrag.llm.costs.price`)."""
    return costs.price(reader.profile, tokens_in, tokens_out, **usage)


@dataclass
class GovernedReader(Reader):
    """A reader whose calls are admitted by a governor's budget (same name, identity and cache keys)."""

    inner: Reader
    governor: Any

    def __post_init__(self):
        self.profile = self.inner.profile

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    @property
    def records_replies(self) -> bool:  # type: ignore[override]
        return self.inner.records_replies

    def read(self, request: ReadRequest) -> CallResult:
        worst = price(self, count_messages(request.messages), self.profile.max_tokens)
        if not self.governor.reserve(worst):
            return CallResult(False, error=f"{BUDGET_REFUSED}: this call's worst case ${worst:.6f} would pass the "
                              "sweep's shared budget cap; re-run with a higher budget to finish")
        res = None
        try:
            res = self.inner.read(request)
        finally:
            actual = (price(self, res.input_tokens, res.output_tokens, cached_tokens=res.cached_tokens,
                            cache_write_tokens=res.cache_write_tokens) if (res is not None and res.ok) else 0.0)
            self.governor.settle(worst, actual)
        return res
