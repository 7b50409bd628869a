"""The cap's early-stop margin: `--max-cost` at concurrency 32 on a mix of 8- and 128-frame requests.

A loopback OpenAI server bills what OpenAI would (`Reply.counted`: every frame by gpt-4o's tile
rule, the prompt's text, a 300-token answer) after 100 ms. The run asks the sample's four 8-frame
Level-1 tasks and its two 128-frame Level-3 tasks (ExpVid F.2 frames, 224 px; 2 samples per item:
168 requests), and is capped at a fraction of what the whole run costs.

Measured, in the same run, for expvid's admission (each request by its own upper bound: its frames,
its prompt, its whole max_tokens; bounds held while in flight, the difference given back) and for
the admission it replaced (each request at the mean cost of the answers so far, one request alone
until the first answer): what was spent against the cap, and how early the run stopped.

    python benchmarks/budget_margin.py [--cap-fraction 0.5] [--concurrency 32] [--max-tokens 8192]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.models.pricing import Price
from expvid.run import spending
from expvid.run.bounds import Bound
from expvid.run.budget import BudgetExhausted, BudgetStop
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.schema import Usage
from expvid.suites.sample import make_sample

TASKS = ["tools", "materials", "quantity", "operation", "experimental_conclusion", "scientific_discovery"]
PRICE = Price(input_per_m=2.5, output_per_m=10.0, source="gpt-4o standard price")
ANSWER_TOKENS = 300


@dataclass
class MeanCostGate:
    """The admission expvid used before: a request is admitted at the mean cost of the answers so
    far (one at a time until the first answer), so a 128-frame request after 8-frame answers is
    admitted at an 8-frame price. Same interface as `BudgetGate` for the generation phase."""

    max_cost: float
    price: Price
    spent: float = 0.0
    answers: int = 0
    reserved: float = 0.0
    in_flight: int = 0
    stop: BudgetStop | None = None
    refused: int = 0
    _condition: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def stopped(self) -> bool:
        return self.stop is not None

    async def reserve(self, bound: Bound) -> Bound:
        async with self._condition:
            await self._condition.wait_for(lambda: self.answers > 0 or self.in_flight == 0 or self.stopped)
            expected = self.spent / self.answers if self.answers else (bound.usd or 0.0)
            if self.stop is None and self.spent + self.reserved + expected > self.max_cost:
                self.stop = BudgetStop(limit="max_cost", budget=self.max_cost, spent=self.spent)
            if self.stop is not None:
                self.refused += 1
                raise BudgetExhausted(self.stop.describe())
            self.reserved += expected
            self.in_flight += 1
            return Bound(expected, 0)

    async def settle_usage(self, reserved: Bound, usage: Usage | None, *, cached: bool = False) -> None:
        async with self._condition:
            self.reserved -= reserved.usd or 0.0
            self.in_flight -= 1
            if usage is not None and not cached:
                self.spent += self.price.cost(usage.prompt_tokens or 0, usage.completion_tokens or 0)
                self.answers += 1
            self._condition.notify_all()

    async def release(self, reserved: Bound) -> None:
        await self.settle_usage(reserved, None)


def run_cost(out: Path) -> tuple[float, int]:
    total, n = 0.0, 0
    for line in (out / "predictions.jsonl").read_text().splitlines():
        usage = json.loads(line).get("usage")
        if usage:
            total += PRICE.cost(usage["prompt_tokens"], usage["completion_tokens"])
            n += 1
    return total, n


def one_run(
    data: Path, url: str, out: Path, cache: Path, cap: float, args: argparse.Namespace
) -> dict[str, Any]:
    config = EvalConfig(
        data=data,
        model=f"openai:gpt-4o@{url}",
        out=out,
        tasks=TASKS,
        samples=2,
        concurrency=args.concurrency,
        max_tokens=args.max_tokens,
        cache_dir=cache,
        cache_responses=False,  # frames are shared by the three runs, answers are not
        n_bootstrap=0,
        prices={"": PRICE},
        max_cost=cap,
    )
    started = time.perf_counter()
    result = asyncio.run(evaluate(config, command=["benchmark"], show_progress=False))
    spent, sent = run_cost(out)
    manifest = json.loads((out / "manifest.json").read_text())
    stop = manifest["config"]["budget_stop"] or {}
    return {
        "spent": spent,
        "sent": sent,
        "not_sent": result.not_sent,
        "next_bound": stop.get("next_bound"),
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap-fraction", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=8192)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="expvid-budget-") as tmp:
        root = Path(tmp)
        data = root / "sample"
        make_sample(data, seed=0)
        cache = root / "cache"
        reply = Reply.counted("The answer is \\boxed{A}", completion_tokens=ANSWER_TOKENS, delay_s=0.1)
        with LoopbackServer(reply) as server:
            full = one_run(data, server.openai_base_url, root / "full", cache, 1e9, args)
            cap = round(full["spent"] * args.cap_fraction, 4)
            bounded = one_run(data, server.openai_base_url, root / "bounded", cache, cap, args)
            original = spending.RunPricing.gate
            spending.RunPricing.gate = lambda self, config, rundir, shared=None: MeanCostGate(  # type: ignore[method-assign,assignment,misc]
                max_cost=cap, price=PRICE
            )
            try:
                mean = one_run(data, server.openai_base_url, root / "mean", cache, cap, args)
            finally:
                spending.RunPricing.gate = original  # type: ignore[method-assign]
    print(
        f"whole run: {full['sent']} requests, ${full['spent']:.4f}; cap ${cap:.4f} ({args.cap_fraction:.0%})"
    )
    print(
        f"concurrency {args.concurrency}, max_tokens {args.max_tokens}, answers of {ANSWER_TOKENS} tokens\n"
    )
    print("| admission | requests sent | spent | spent / cap | under the cap by | margin / next bound |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, row in (("own upper bound (expvid)", bounded), ("mean cost so far (before)", mean)):
        margin = cap - row["spent"]
        ratio = "-" if not row["next_bound"] else f"{margin / row['next_bound']:.2f}"
        print(
            f"| {name} | {row['sent']} | ${row['spent']:.4f} | {row['spent'] / cap:.3f} | "
            f"${margin:.4f} ({margin / cap:.1%}) | {ratio} |"
        )
    over = mean["spent"] / bounded["spent"] if bounded["spent"] else float("nan")
    print(f"\nmean-cost admission spent {over:.2f}x what bound admission spent under the same cap")
    print(
        f"bound admission: never past the cap; it stopped ${cap - bounded['spent']:.4f} short, less than the "
        f"bound of the request it did not send (${bounded['next_bound'] or 0:.4f})"
    )


if __name__ == "__main__":
    main()
