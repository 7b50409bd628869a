"""What a run may spend, what each request is expected to cost, and the batch API it may use.

`RunPricing.of(config)` resolves the model's price once (the price table or `--price`), the
provider's image-token rule, and the expectation the budget uses before any answer has come back
(`estimate.request_expectation`: the request's real images and text, a typical answer length for
its answer type). `gate` builds the budget from what the run directory already spent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from expvid.models.pricing import ModelRef, Price, model_ref, price_for
from expvid.models.types import BackendConfigError, GenerateRequest, ModelBackend
from expvid.run.budget import BudgetGate, BudgetStop, Expectation
from expvid.run.config import EvalConfig
from expvid.run.cost import run_cost
from expvid.run.estimate import TYPICAL_OUTPUT, request_expectation
from expvid.run.rundir import RunDir
from expvid.schema import DataError

if TYPE_CHECKING:  # imported by --batch runs only (start-up time of every other run)
    from expvid.models.batch import BatchAdapter
    from expvid.run.batch_phase import BatchOutcome


@dataclass(frozen=True)
class RunPricing:
    ref: ModelRef
    price: Price | None
    max_tokens: int | None = None

    @classmethod
    def of(cls, config: EvalConfig, backend_options: Mapping[str, Any]) -> RunPricing:
        base_url = backend_options.get("base_url")
        url = base_url if isinstance(base_url, str) else None
        return cls(model_ref(config.model, url), price_for(config.model, config.prices, url))

    def expect(self, request: GenerateRequest) -> Expectation:
        typical = TYPICAL_OUTPUT.get(request.hints.answer_type, 200) if request.hints is not None else 200
        output = min(request.max_tokens, typical)
        if self.ref.model and request.messages and self.ref.provider != "offline":
            return request_expectation(request, self.ref, self.price, output)
        return Expectation(0.0 if self.price is not None else None, 0)

    def gate(self, config: EvalConfig, rundir: RunDir) -> BudgetGate | None:
        if config.max_cost is None and config.max_tokens_total is None:
            return None
        try:
            return BudgetGate.for_run(
                max_cost=config.max_cost,
                max_tokens=config.max_tokens_total,
                price=self.price,
                spent=run_cost(rundir.predictions_path, self.price),
            )
        except ValueError as error:
            raise DataError(str(error)) from None


def batch_adapter_for(backend: ModelBackend) -> BatchAdapter:
    """The backend's batch adapter, or a DataError before any work when it has none."""
    from expvid.models.batch import batch_adapter

    try:
        return batch_adapter(backend)
    except BackendConfigError as error:
        raise DataError(str(error)) from None


def record_spending(
    manifest_config: dict[str, Any],
    budget: BudgetGate | None,
    outcome: BatchOutcome | None,
    not_sent: int,
    console: Console,
) -> BudgetStop | None:
    """Write what generation ended with into the manifest's config (`budget_stop`, `batch`) and say
    it; returns the budget stop, if any."""
    stop = budget.stop if budget is not None else None
    if stop is not None:
        stop.not_sent = not_sent
        console.print(f"[yellow]budget[/]: {escape(stop.describe())}")
    manifest_config["budget_stop"] = (
        None if stop is None else {**stop.model_dump(mode="json"), "description": stop.describe()}
    )
    if outcome is not None:
        manifest_config["batch"] = {
            "pending": outcome.pending,
            "submitted": outcome.submitted,
            "merged": outcome.merged,
            "retried_online": outcome.retried_online,
            "retried_in_batch": outcome.retried_in_batch,
            "recorded_failures": outcome.recorded_failures,
            "unsubmitted": outcome.unsubmitted,
            "notes": outcome.notes,
        }
        for note in outcome.notes:
            console.print(f"[yellow]note[/]: {escape(note)}")
    return stop
