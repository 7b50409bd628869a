"""Stopping a run at a budget (`--max-cost USD`, `--max-tokens-total N`) that it never passes.

Every request is admitted by its own upper bound (`bounds.Bound`: its images by the provider's
rule, its prompt, its whole `max_tokens`), never by an average. A `Ledger` holds one budget:
what was spent before (every earlier request of the run directory, `cost.run_cost`), what answers
reported since, and the bounds of the requests in flight. A request is sent only when

    spent + the bounds of the requests in flight + its own bound <= budget;

when it does not fit it waits for requests in flight to come back (each gives back the difference
between its bound and what it really used), and when nothing is in flight and it still does not
fit, the run stops cleanly: nothing more is sent, the items not asked stay without a prediction
(the same command with a larger budget continues them), and the manifest, `scores.json` and every
report say the run stopped at its budget. So the total never passes the budget: it stays under it
by less than the bound of the request that was not sent (`BudgetStop.next_bound`), which is what
the run may stop early by.

A ledger can be shared: `expvid eval-set` gives every cell one ledger for the whole set (each
cell prices its requests at its own model's price) besides a cell's own budget.

A batch run (`--batch`) admits requests into batches the same way at the batch price, without
waiting (`try_reserve`): what does not fit waits for the open batches' results, which give back
what their requests did not use, and is submitted then. Answers from the response cache cost
nothing and are always served. What the bound cannot know is in docs/api-campaigns.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field

from pydantic import BaseModel

from expvid.models.pricing import Price
from expvid.run.bounds import Bound
from expvid.run.cost import RunCost
from expvid.schema import Usage


class BudgetStop(BaseModel):
    """Why and where a run stopped (manifest config["budget_stop"], scores.json run.budget_stop)."""

    limit: str  # "max_cost" | "max_tokens_total"
    budget: float
    spent: float
    not_sent: int = 0
    #: Whose budget: "run" (`--max-cost`) or "eval-set" (the set's shared `max_cost`).
    scope: str = "run"
    #: The bound of the request that did not fit (USD or tokens): the run stopped short of its
    #: budget by less than this.
    next_bound: float | None = None

    def describe(self) -> str:
        if self.limit == "max_cost":
            flag = "the eval-set's max_cost" if self.scope == "eval-set" else "--max-cost"
            what = f"{flag} ${self.budget:g} (spent ${self.spent:.4f}"
            bound = (
                ""
                if self.next_bound is None
                else f"; the next request could cost up to ${self.next_bound:.4f}"
            )
        else:
            flag = "the eval-set's max_tokens_total" if self.scope == "eval-set" else "--max-tokens-total"
            what = f"{flag} {int(self.budget)} (used {int(self.spent)} tokens"
            bound = (
                ""
                if self.next_bound is None
                else f"; the next request could use up to {int(self.next_bound)}"
            )
        left = f"; {self.not_sent} request(s) not sent" if self.not_sent else ""
        return f"stopped at the budget {what}{bound}){left}; re-run with a larger budget to continue"


class BudgetExhausted(Exception):
    """Raised instead of sending a request that would pass the budget."""


@dataclass
class Ledger:
    """One budget: its limits, what was spent, and the bounds held by requests in flight."""

    max_cost: float | None
    max_tokens: int | None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    reserved_usd: float = 0.0
    reserved_tokens: int = 0
    #: Online requests in flight: what a request that does not fit may wait for. Requests held in
    #: a provider's batch give their room back only when the batch is merged: not waited for.
    in_flight: int = 0
    scope: str = "run"
    stop: BudgetStop | None = None
    #: One condition per ledger family (a shared ledger's gates all wait on it).
    condition: asyncio.Condition = field(default_factory=asyncio.Condition)

    def overflow(self, bound: Bound) -> BudgetStop | None:
        """The stop this bound would cause now, or None when it fits."""
        for limit, budget, spent, reserved, next_bound in (
            ("max_cost", self.max_cost, self.spent_usd, self.reserved_usd, bound.usd),
            ("max_tokens_total", self.max_tokens, self.spent_tokens, self.reserved_tokens, bound.tokens),
        ):
            if budget is not None and spent + reserved + (next_bound or 0) > budget:
                return BudgetStop(
                    limit=limit, budget=budget, spent=spent, scope=self.scope, next_bound=next_bound
                )
        return None

    def take(self, bound: Bound) -> None:
        self.reserved_usd += bound.usd or 0.0
        self.reserved_tokens += bound.tokens
        self.in_flight += 0 if bound.batched else 1

    def give_back(self, bound: Bound) -> None:
        self.reserved_usd = max(0.0, self.reserved_usd - (bound.usd or 0.0))
        self.reserved_tokens = max(0, self.reserved_tokens - bound.tokens)
        if not bound.batched:
            self.in_flight = max(0, self.in_flight - 1)

    def spend(self, usd: float, tokens: int) -> None:
        self.spent_usd += usd
        self.spent_tokens += tokens
        if self.stop is not None:
            self.stop.spent = self.spent_usd if self.stop.limit == "max_cost" else self.spent_tokens

    @classmethod
    def of(
        cls,
        *,
        max_cost: float | None,
        max_tokens: int | None,
        spent: RunCost | None = None,
        scope: str = "run",
    ) -> Ledger:
        return cls(
            max_cost=max_cost,
            max_tokens=max_tokens,
            spent_usd=(spent.usd or 0.0) if spent is not None else 0.0,
            spent_tokens=spent.total_tokens if spent is not None else 0,
            scope=scope,
        )


@dataclass
class BudgetGate:
    """A run's admission to its budgets (its own and any shared one), at its model's price."""

    ledgers: list[Ledger]
    price: Price | None
    refused: int = 0

    @classmethod
    def for_run(
        cls,
        *,
        max_cost: float | None,
        max_tokens: int | None,
        price: Price | None,
        spent: RunCost,
        shared: Ledger | None = None,
    ) -> BudgetGate | None:
        if max_cost is None and max_tokens is None and shared is None:
            return None
        needs_price = max_cost is not None or (shared is not None and shared.max_cost is not None)
        if needs_price and price is None:
            raise ValueError(
                "--max-cost needs a price for the model (none in the price table): give --price MODEL=IN,OUT"
            )
        ledgers = [] if shared is None else [shared]
        if max_cost is not None or max_tokens is not None:
            own = Ledger.of(max_cost=max_cost, max_tokens=max_tokens, spent=spent)
            if shared is not None:
                own.condition = shared.condition  # one condition for every ledger a request waits on
            ledgers.append(own)
        return cls(ledgers=ledgers, price=price)

    @property
    def condition(self) -> asyncio.Condition:
        return self.ledgers[0].condition

    @property
    def stop(self) -> BudgetStop | None:
        return next((ledger.stop for ledger in self.ledgers if ledger.stop is not None), None)

    @property
    def stopped(self) -> bool:
        return self.stop is not None

    def _refuse(self) -> BudgetExhausted:
        self.refused += 1
        stop = self.stop
        assert stop is not None
        return BudgetExhausted(stop.describe())

    def _overflow(self, bound: Bound) -> BudgetStop | None:
        for ledger in self.ledgers:
            problem = ledger.overflow(bound)
            if problem is not None:
                return problem
        return None

    def _idle(self) -> bool:
        return all(ledger.in_flight == 0 for ledger in self.ledgers)

    async def reserve(self, bound: Bound) -> Bound:
        """Hold `bound` for one request, waiting while requests in flight may give room back;
        `BudgetExhausted` (and the budget is marked stopped) when it cannot fit even then.

        A request whose bound is not known yet (`Bound.known` False) goes alone."""
        async with self.condition:
            while True:
                if self.stopped:
                    raise self._refuse()
                if not bound.known and not self._idle():
                    await self.condition.wait()
                    continue
                problem = self._overflow(bound)
                if problem is None:
                    for ledger in self.ledgers:
                        ledger.take(bound)
                    return bound
                if self._idle():
                    self._halt(problem)
                    raise self._refuse()
                await self.condition.wait()

    async def try_reserve(self, bound: Bound) -> Bound | None:
        """Hold `bound` if it fits now (a batch: nothing waits for a batch being written); None if not.
        Never stops the run: the caller decides (`halt`) once nothing it holds can give room back."""
        async with self.condition:
            if self.stopped or self._overflow(bound) is not None:
                return None
            held = dataclasses.replace(bound, batched=True)
            for ledger in self.ledgers:
                ledger.take(held)
            return held

    async def halt(self, bound: Bound) -> None:
        """Record that `bound` does not fit with nothing left to give room back: the run stops."""
        async with self.condition:
            problem = self._overflow(bound)
            if problem is not None and not self.stopped:
                self._halt(problem)

    def _halt(self, problem: BudgetStop) -> None:
        for ledger in self.ledgers:
            if ledger.scope == problem.scope and ledger.stop is None:
                ledger.stop = problem
        self.condition.notify_all()

    async def hold(self, bound: Bound) -> Bound:
        """Hold room for a request already in a batch (an open batch of an earlier session), unchecked."""
        held = dataclasses.replace(bound, batched=True)
        async with self.condition:
            for ledger in self.ledgers:
                ledger.take(held)
            return held

    async def settle(self, reserved: Bound, usd: float | None, tokens: int | None) -> None:
        """Record what a request really used (None: it reported no usage, and its bound counts)."""
        async with self.condition:
            spent_usd = (reserved.usd or 0.0) if usd is None else usd
            spent_tokens = reserved.tokens if tokens is None else tokens
            for ledger in self.ledgers:
                ledger.give_back(reserved)
                ledger.spend(spent_usd, spent_tokens)
            self.condition.notify_all()

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
        self, reserved: Bound, usage: Usage | None, *, cached: bool = False, discount: float = 1.0
    ) -> None:
        """`settle` from a response's usage (a cached answer costs nothing: its bound is freed)."""
        if cached:
            await self.release(reserved)
            return
        usd, tokens = self.usage_cost(usage)
        await self.settle(reserved, None if usd is None else usd * discount, tokens)

    async def release(self, reserved: Bound) -> None:
        """Give back a bound whose request cost nothing (failed before the provider answered)."""
        async with self.condition:
            for ledger in self.ledgers:
                ledger.give_back(reserved)
            self.condition.notify_all()
