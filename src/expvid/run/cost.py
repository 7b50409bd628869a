"""What a run directory's answers actually cost, from the usage the providers reported.

Every line of `predictions.jsonl` that reached the provider counts, not only the latest answer per
item: a failed attempt that reported usage (a cut answer later redone) was paid for too. Answers
served from the response cache cost nothing in this run; they are counted apart, with what they
would have cost, so a report can say both what was spent and what the answers are worth. Answers
from a provider's batch API are priced at the batch discount (`pricing.BATCH_DISCOUNT`).

Judge calls are not included: the judge is a scoring setting and its calls are cached by answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from expvid.models.pricing import BATCH_DISCOUNT, Price
from expvid.run.rundir import read_records
from expvid.schema import Prediction

#: Key of `Prediction.sent` naming the batch an answer came from ({"provider", "id"}).
BATCH_SENT_KEY = "batch"


class RunCost(BaseModel):
    """`scores.json` → run.cost: tokens and USD of a run directory's requests."""

    currency: str = "USD"
    #: The price used (None: unknown, and `usd` is None) and where it comes from.
    price: Price | None = None
    #: Requests answered by the provider in this run directory (every attempt with usage).
    requests: int = 0
    #: Of these, answered through a batch API (priced at `batch_discount`).
    batch_requests: int = 0
    batch_discount: float = BATCH_DISCOUNT
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    #: Of `prompt_tokens`, those the provider read from its prompt cache (billed at the cached rate).
    cache_read_tokens: int = 0
    #: Requests that reported no usage (their cost is not known; counted apart).
    requests_without_usage: int = 0
    #: Answers served from the response cache (no cost in this run) and their tokens.
    cached: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    #: USD spent by this run directory; None when no price is known.
    usd: float | None = None
    #: What the cached answers would have cost at this price (None when unpriced).
    usd_cached: float | None = None

    @property
    def total_tokens(self) -> int:
        return (
            self.prompt_tokens
            + self.completion_tokens
            + (self.reasoning_tokens if self.price is not None and self.price.reasoning_separate else 0)
        )

    def summary(self) -> str:
        """One line for reports, said after "cost": "$1.2345 for 120 requests (1.2M tokens in, 45k out;
        3 cached; ...)", or "unknown (no price: ...) for 120 requests (...)"."""
        spent = "unknown (no price: give --price MODEL=IN,OUT)" if self.usd is None else f"${self.usd:.4f}"
        parts = [f"{_tokens(self.prompt_tokens)} tokens in", f"{_tokens(self.completion_tokens)} out"]
        if self.reasoning_tokens:
            parts.append(f"{_tokens(self.reasoning_tokens)} reasoning")
        if self.cache_read_tokens:
            parts.append(f"{_tokens(self.cache_read_tokens)} of the input from the provider's prompt cache")
        if self.batch_requests:
            parts.append(f"{self.batch_requests} via batch at {1 - self.batch_discount:.0%} off")
        if self.cached:
            worth = "" if self.usd_cached is None else f", worth ${self.usd_cached:.4f}"
            parts.append(f"{self.cached} answer(s) from the cache{worth}")
        priced = self.price is None or self.price.input_per_m or self.price.output_per_m
        if self.requests_without_usage and priced:
            parts.append(f"{self.requests_without_usage} request(s) without reported usage, not counted")
        price = "" if self.price is None else f"; {self.price.label()}, {self.price.source}"
        return f"{spent} for {self.requests} request(s) ({'; '.join(parts)}{price})"


def _tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.2f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    return str(n)


def prediction_cost(prediction: Prediction, price: Price) -> float:
    """USD of one answer at `price` (batch answers at the batch discount); 0 without usage."""
    usage = prediction.usage
    if usage is None:
        return 0.0
    usd = price.cost(
        usage.prompt_tokens or 0,
        usage.completion_tokens or 0,
        usage.reasoning_tokens or 0,
        usage.cache_read_tokens or 0,
    )
    return usd * BATCH_DISCOUNT if is_batch(prediction) else usd


def is_batch(prediction: Prediction) -> bool:
    return isinstance(prediction.sent.get(BATCH_SENT_KEY), dict)


def reached_provider(prediction: Prediction) -> bool:
    """The answer (or failure) came from a provider's request: not a cache hit, not a media failure."""
    return not prediction.cached and (prediction.usage is not None or prediction.response is not None)


def cost_of(predictions: Iterable[Prediction], price: Price | None) -> RunCost:
    cost = RunCost(price=price, usd=0.0 if price is not None else None)
    usd = 0.0
    usd_cached = 0.0
    for prediction in predictions:
        usage = prediction.usage
        if prediction.cached:
            cost.cached += 1
            if usage is not None:
                cost.cached_prompt_tokens += usage.prompt_tokens or 0
                cost.cached_completion_tokens += usage.completion_tokens or 0
                if price is not None:
                    usd_cached += prediction_cost(prediction, price)
            continue
        if not reached_provider(prediction):
            continue
        if usage is None or (usage.prompt_tokens is None and usage.completion_tokens is None):
            cost.requests_without_usage += 1
            continue
        cost.requests += 1
        cost.batch_requests += is_batch(prediction)
        cost.prompt_tokens += usage.prompt_tokens or 0
        cost.completion_tokens += usage.completion_tokens or 0
        cost.reasoning_tokens += usage.reasoning_tokens or 0
        cost.cache_read_tokens += usage.cache_read_tokens or 0
        if price is not None:
            usd += prediction_cost(prediction, price)
    if price is not None:
        cost.usd = round(usd, 6)
        cost.usd_cached = round(usd_cached, 6)
    return cost


def run_cost(predictions_path: Path, price: Price | None) -> RunCost:
    """The cost of every request recorded in a `predictions.jsonl` (all lines, not only the latest)."""
    records = (record for _, record in read_records(predictions_path, Prediction))
    return cost_of((r for r in records if isinstance(r, Prediction)), price)


class RunExtras(BaseModel):
    """What `scores.json` says about a run besides its scores: its cost, whether it stopped at a
    budget, requests still waiting in a provider's batches. Read from the run directory, so
    `expvid score RUN_DIR` writes the same."""

    cost: RunCost | None = None
    budget_stop: str | None = None
    pending_batch_requests: int = 0


def run_extras(run_root: Path, manifest_config: dict[str, Any]) -> RunExtras:
    """The extras of the run directory at `run_root`, from its manifest's config and predictions."""
    raw_price = manifest_config.get("price")
    price = Price.model_validate(raw_price) if isinstance(raw_price, dict) else None
    cost = run_cost(run_root / "predictions.jsonl", price)
    stop = manifest_config.get("budget_stop")
    batch = manifest_config.get("batch")
    pending = batch.get("pending", 0) if isinstance(batch, dict) else 0
    return RunExtras(
        cost=cost,
        budget_stop=stop.get("description") if isinstance(stop, dict) else None,
        pending_batch_requests=int(pending or 0),
    )
