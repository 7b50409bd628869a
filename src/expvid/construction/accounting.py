"""Counting every model call of a build: calls, cache hits, tokens, invalid replies, and estimated cost.

Costs are estimates from a price table (USD per 1M input / output tokens) that the user gives per model
role (`llm`, `vlm`, `blind`); without a price, cost is reported as unknown (None), never as 0. Calls
served from the response cache cost nothing in this run: they are counted apart, with their tokens,
so the report can say both what this run spent and what the whole build cost from scratch.
Reasoning tokens are part of the completion tokens (OpenAI and DeepSeek count them so) and are
priced as output.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from expvid.models.pricing import Price
from expvid.models.types import GenerateResponse

ROLES = ("llm", "vlm", "blind")


def parse_price(text: str) -> tuple[list[str], Price]:
    """`ROLE=IN,OUT` or `IN,OUT` (all roles) -> (roles, price); ValueError with the expected form."""
    roles_part, sep, numbers = text.partition("=")
    roles = list(ROLES) if not sep else [r.strip() for r in roles_part.split("+")]
    if not sep:
        numbers = roles_part
    bad = [r for r in roles if r not in ROLES]
    if bad:
        raise ValueError(f"price {text!r}: unknown role(s) {bad}; roles are {', '.join(ROLES)}")
    try:
        values = [float(part) for part in numbers.split(",")]
    except ValueError:
        values = []
    if len(values) != 2 or any(v < 0 for v in values):
        raise ValueError(f"price {text!r}: expected [ROLE=]IN,OUT in USD per 1M tokens, e.g. llm=0.55,2.19")
    return roles, Price(input_per_m=values[0], output_per_m=values[1])


@dataclass
class StageCounts:
    """Counters of one stage (one prompt) for one model role."""

    requests: int = 0  # replies produced by the model in this run (not from the cache)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    invalid_replies: int = 0  # replies that were not valid JSON of the expected shape (or refusals)
    retries: int = 0  # re-asks after an invalid reply
    failures: int = 0  # calls that produced nothing usable after all attempts (or a backend error)

    def add(self, other: StageCounts) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class Ledger:
    """Counters by (role, stage), plus the models behind each role and their prices."""

    prices: dict[str, Price] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    stages: dict[tuple[str, str], StageCounts] = field(default_factory=lambda: defaultdict(StageCounts))
    #: The same counts by build phase (curation, level1, level2, level3, blind_audit), all roles.
    phases: dict[str, StageCounts] = field(default_factory=lambda: defaultdict(StageCounts))

    def counts(self, role: str, stage: str) -> StageCounts:
        return self.stages[(role, stage)]

    def phase(self, phase: str) -> StageCounts:
        return self.phases[phase]

    def record_response(self, role: str, stage: str, response: GenerateResponse, *, phase: str = "") -> None:
        usage = response.usage
        prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
        for counts in (self.counts(role, stage), self.phase(phase or stage)):
            if response.cached:
                counts.cache_hits += 1
                counts.cached_prompt_tokens += prompt
                counts.cached_completion_tokens += completion
            else:
                counts.requests += 1
                counts.prompt_tokens += prompt
                counts.completion_tokens += completion
                counts.reasoning_tokens += usage.reasoning_tokens or 0

    def totals(self, role: str | None = None) -> StageCounts:
        total = StageCounts()
        for (r, _stage), counts in self.stages.items():
            if role is None or r == role:
                total.add(counts)
        return total

    def cost(self, *, include_cached: bool) -> float | None:
        """Estimated USD; None when a role that made calls has no price."""
        total = 0.0
        for role in {r for r, _ in self.stages}:
            counts = self.totals(role)
            prompt = counts.prompt_tokens + (counts.cached_prompt_tokens if include_cached else 0)
            completion = counts.completion_tokens + (counts.cached_completion_tokens if include_cached else 0)
            if prompt == 0 and completion == 0:
                continue
            price = self.prices.get(role)
            if price is None:
                return None
            total += price.cost(prompt, completion)
        return round(total, 6)

    def as_dict(self) -> dict[str, Any]:
        """The report's `calls` / `tokens` / `cost` sections."""
        total = self.totals()
        by_stage: dict[str, dict[str, Any]] = {}
        for (role, stage), counts in sorted(self.stages.items()):
            by_stage[f"{role}:{stage}"] = asdict(counts)
        unpriced = sorted({r for r, _ in self.stages if r not in self.prices and self.totals(r).requests})
        return {
            "calls": {
                "sent": total.requests,
                "cache_hits": total.cache_hits,
                "invalid_replies": total.invalid_replies,
                "retries": total.retries,
                "failures": total.failures,
                "by_stage": by_stage,
            },
            "tokens": {
                "prompt": total.prompt_tokens,
                "completion": total.completion_tokens,
                "reasoning": total.reasoning_tokens,
                "cached_prompt": total.cached_prompt_tokens,
                "cached_completion": total.cached_completion_tokens,
            },
            "cost": {
                "currency": "USD",
                "this_run": self.cost(include_cached=False),
                #: What this run's replies would have cost without the cache.
                "including_cached": self.cost(include_cached=True),
                "prices_per_1m_tokens": {
                    role: [price.input_per_m, price.output_per_m]
                    for role, price in sorted(self.prices.items())
                },
                "models": dict(sorted(self.models.items())),
                "note": (
                    "estimate from token counts x the given prices"
                    if not unpriced
                    else f"unknown: no price given for {', '.join(unpriced)} (use --price ROLE=IN,OUT)"
                ),
            },
        }
