"""Adaptive concurrency (AIMD), shared by every request of one backend.

A fixed concurrency is either too timid for a local vLLM server or too aggressive for a rate-limited
API. Like TCP congestion control, the limiter starts at the configured maximum, halves when the server
answers 429, and grows back by one slot after a run of successes.

A burst of 429s from requests that were all in flight together must count as ONE overload signal,
otherwise eight concurrent 429s would cut 8 slots to 1/256. Each slot remembers the limiter's epoch
when it was taken; only a 429 on a slot taken in the current epoch halves the limit (and opens a new
epoch), so answers to requests sent before the last cut are ignored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypedDict

from expvid.models.types import at_least_one


@dataclass(frozen=True)
class Slot:
    epoch: int


class LimiterGauges(TypedDict):
    """Where a limiter stands, as the backends' stats report it."""

    limit: int
    max_limit: int
    in_flight: int
    peak_in_flight: int


class AdaptiveLimiter:
    """Caps requests in flight at `limit`, which moves between 1 and `max_limit`."""

    def __init__(self, max_limit: int, *, grow_after: int = 8) -> None:
        self.max_limit = at_least_one("max_limit", max_limit)
        self.limit = max_limit
        self.grow_after = at_least_one("grow_after", grow_after)
        self.in_flight = 0
        self.peak_in_flight = 0
        self.decreases = 0
        self._epoch = 0
        self._streak = 0
        # Created lazily: asyncio primitives bind to the loop that first uses them.
        self._condition: asyncio.Condition | None = None

    @property
    def _cond(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition

    def gauges(self) -> LimiterGauges:
        return LimiterGauges(
            limit=self.limit,
            max_limit=self.max_limit,
            in_flight=self.in_flight,
            peak_in_flight=self.peak_in_flight,
        )

    def rebind(self) -> None:
        """Start over on a new event loop: no task of the old loop can still hold a slot."""
        self._condition = None
        self.in_flight = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        """Hold one slot for the duration of one attempt."""
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            slot = Slot(self._epoch)
        try:
            yield slot
        finally:
            async with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def on_overload(self, slot: Slot) -> bool:
        """A 429 answered `slot`. Halve the limit unless this overload was already reacted to."""
        self._streak = 0
        if slot.epoch != self._epoch:
            return False
        self._epoch += 1
        self.limit = max(1, self.limit // 2)
        self.decreases += 1
        return True

    def on_success(self) -> None:
        """One more success in a row; every `grow_after` of them add a slot, up to `max_limit`.

        Waiters are woken when the slot that reported success is released.
        """
        self._streak += 1
        if self._streak >= self.grow_after and self.limit < self.max_limit:
            self.limit += 1
            self._streak = 0
