"""Stopping a run at a budget (`--max-cost USD`, `--max-tokens-total N`), from the usage the APIs report.

The gate counts what the run directory has already spent (every earlier request, `cost.run_cost`)
plus each answer as it arrives. Before a request is sent it asks for room: the request's expected
cost is what the run directory's answers have cost on average so far (the dry-run estimate of the
request before the first answer), and room is given only while

    spent + expected cost of the requests in flight + expected cost of this one <= budget,

and, until the first answer has said what a request really costs, for one request at a time.

When there is no room the run stops cleanly: nothing more is sent, the requests in flight finish and
are recorded, the items not asked stay without a prediction (so the same command with a larger
budget continues them), and the manifest, `scores.json` and every report say the run stopped at
its budget. The total can pass the budget only by what the requests in flight cost above their
expectation. Answers from the response cache cost nothing and are always served.

A batch run (`--batch`) admits each request into a batch the same way, at the batch price; its real
cost is known when the batch's results arrive, so until then the expectations are all it has (the
run directory's mean cost when it has answers, else the dry-run estimate), and a run resumed later
holds the estimate of every request still waiting in a batch.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pydantic import BaseModel

from expvid.models.pricing import Price
from expvid.run.cost import RunCost
from expvid.schema import Usage


class BudgetStop(BaseModel):
    """Why and where a run stopped (manifest config["budget_stop"], scores.json run.budget_stop)."""

    limit: str  # "max_cost" | "max_tokens_total"
    budget: float
    spent: float
    not_sent: int = 0

    def describe(self) -> str:
        if self.limit == "max_cost":
            what = f"--max-cost ${self.budget:g} (spent ${self.spent:.4f})"
        else:
            what = f"--max-tokens-total {int(self.budget)} (used {int(self.spent)} tokens)"
        left = f"; {self.not_sent} request(s) not sent" if self.not_sent else ""
        return f"stopped at the budget {what}{left}; re-run with a larger budget to continue"


class BudgetExhausted(Exception):
    """Raised instead of sending a request that would pass the budget."""


@dataclass
class Expectation:
    """What one request is expected to use: cost in USD (None: unpriced) and tokens."""

    usd: float | None
    tokens: int


@dataclass
class BudgetGate:
    max_cost: float | None
    max_tokens: int | None
    price: Price | None
    #: Spent before this session (earlier requests of the run directory).
    spent_usd: float = 0.0
    spent_tokens: int = 0
    _reserved_usd: float = 0.0
    _reserved_tokens: int = 0
    _answers: int = 0
    _answer_usd: float = 0.0
    _answer_tokens: int = 0
    stop: BudgetStop | None = None
    refused: int = 0
    _in_flight: int = 0
    _lock: asyncio.Condition = field(default_factory=asyncio.Condition)

    @classmethod
    def for_run(
        cls, *, max_cost: float | None, max_tokens: int | None, price: Price | None, spent: RunCost
    ) -> BudgetGate | None:
        if max_cost is None and max_tokens is None:
            return None
        if max_cost is not None and price is None:
            raise ValueError(
                "--max-cost needs a price for the model (none in the price table): give --price MODEL=IN,OUT"
            )
        gate = cls(
            max_cost=max_cost,
            max_tokens=max_tokens,
            price=price,
            spent_usd=spent.usd or 0.0,
            spent_tokens=spent.total_tokens,
        )
        # What earlier answers of the run directory cost is the best guess for the next request.
        gate._answers = spent.requests
        gate._answer_usd = spent.usd or 0.0
        gate._answer_tokens = spent.total_tokens
        return gate

    @property
    def stopped(self) -> bool:
        return self.stop is not None

    def _expected(self, fallback: Expectation) -> Expectation:
        if self._answers:
            return Expectation(self._answer_usd / self._answers, round(self._answer_tokens / self._answers))
        return fallback

    async def reserve(self, fallback: Expectation, *, probe_first: bool = True) -> Expectation:
        """Room for one request, or `BudgetExhausted` (and the run is marked stopped).

        `probe_first`: until one answer says what a request really costs, one request at a time
        (the first guess, the dry-run estimate, may be far off, and everything in flight with it).
        A batch cannot wait for an answer before sending the rest: it reserves at the estimate."""
        async with self._lock:
            if probe_first:
                await self._lock.wait_for(
                    lambda: self._answers > 0 or self._in_flight == 0 or self.stop is not None
                )
            if self.stop is not None:
                self.refused += 1
                self.stop.not_sent = self.refused
                raise BudgetExhausted(self.stop.describe())
            expected = self._expected(fallback)
            if self.max_cost is not None:
                projected = self.spent_usd + self._reserved_usd + (expected.usd or 0.0)
                if projected > self.max_cost:
                    self._halt("max_cost", self.max_cost, self.spent_usd)
            if self.stop is None and self.max_tokens is not None:
                projected_tokens = self.spent_tokens + self._reserved_tokens + expected.tokens
                if projected_tokens > self.max_tokens:
                    self._halt("max_tokens_total", self.max_tokens, self.spent_tokens)
            if self.stop is not None:
                self.refused += 1
                self.stop.not_sent = self.refused
                raise BudgetExhausted(self.stop.describe())
            self._reserved_usd += expected.usd or 0.0
            self._reserved_tokens += expected.tokens
            self._in_flight += 1
            return expected

    async def hold(self, expected: Expectation) -> Expectation:
        """Hold room for a request already sent (an open batch from an earlier session), unchecked."""
        async with self._lock:
            self._reserved_usd += expected.usd or 0.0
            self._reserved_tokens += expected.tokens
            self._in_flight += 1
            return expected

    def _halt(self, limit: str, budget: float, spent: float) -> None:
        self.stop = BudgetStop(limit=limit, budget=budget, spent=spent)

    async def settle(self, reserved: Expectation, usd: float | None, tokens: int | None) -> None:
        """Record what a request really used (None: it reported no usage; its expectation stands)."""
        async with self._lock:
            self._reserved_usd -= reserved.usd or 0.0
            self._reserved_tokens -= reserved.tokens
            self._in_flight -= 1
            self._lock.notify_all()
            spent_usd = (reserved.usd or 0.0) if usd is None else usd
            spent_tokens = reserved.tokens if tokens is None else tokens
            self.spent_usd += spent_usd
            self.spent_tokens += spent_tokens
            self._answers += 1
            self._answer_usd += spent_usd
            self._answer_tokens += spent_tokens
            if self.stop is not None:
                self.stop.spent = self.spent_usd if self.stop.limit == "max_cost" else self.spent_tokens

    def usage_cost(self, usage: Usage | None) -> tuple[float | None, int | None]:
        """(USD, tokens) of a reported usage at this run's price; None for what is not known."""
        if usage is None or (usage.prompt_tokens is None and usage.completion_tokens is None):
            return None, None
        prompt, completion, reasoning = (
            usage.prompt_tokens or 0,
            usage.completion_tokens or 0,
            usage.reasoning_tokens or 0,
        )
        cache_read = usage.cache_read_tokens or 0
        usd = None if self.price is None else self.price.cost(prompt, completion, reasoning, cache_read)
        separate = self.price is not None and self.price.reasoning_separate
        return usd, prompt + completion + (reasoning if separate else 0)

    async def settle_usage(
        self, reserved: Expectation, usage: Usage | None, *, cached: bool = False, discount: float = 1.0
    ) -> None:
        """`settle` from a response's usage (a cached answer costs nothing: its reservation is freed)."""
        if cached:
            await self.release(reserved)
            return
        usd, tokens = self.usage_cost(usage)
        await self.settle(reserved, None if usd is None else usd * discount, tokens)

    async def release(self, reserved: Expectation) -> None:
        """Give back a reservation whose request cost nothing (failed before the provider answered)."""
        async with self._lock:
            self._reserved_usd -= reserved.usd or 0.0
            self._reserved_tokens -= reserved.tokens
