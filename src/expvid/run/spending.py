"""What a run may spend, what each request is expected to cost, and the batch API it may use.

`RunPricing.of(config)` resolves the model's price once (the price table or `--price`), the
provider's image-token rule and the image `detail` sent, and so the upper bound of each request
(`bounds.RequestBounds`) the budget admits it by. `gate` builds the budget from what the run
directory already spent (and the eval-set's shared budget, when there is one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from expvid.models.pricing import ModelRef, Price, model_ref, price_for
from expvid.models.types import BackendConfigError, GenerateRequest, ModelBackend
from expvid.run.bounds import FREE, Bound, RequestBounds
from expvid.run.budget import BudgetGate, BudgetStop, Ledger
from expvid.run.config import EvalConfig
from expvid.run.cost import run_cost
from expvid.run.rundir import RunDir
from expvid.schema import DataError, Usage

if TYPE_CHECKING:  # imported by --batch runs only (start-up time of every other run)
    from expvid.models.batch import BatchAdapter
    from expvid.run.batch_state import BatchOutcome


@dataclass(frozen=True)
class RunPricing:
    ref: ModelRef
    price: Price | None
    bounds: RequestBounds

    @classmethod
    def of(cls, config: EvalConfig, backend_options: Mapping[str, Any]) -> RunPricing:
        base_url = backend_options.get("base_url")
        url = base_url if isinstance(base_url, str) else None
        ref = model_ref(config.model, url)
        price = price_for(config.model, config.prices, url)
        detail = backend_options.get("image_detail")
        blind = config.model.strip().startswith("blind:")
        bounds = RequestBounds(ref, price, detail=detail if isinstance(detail, str) else None, blind=blind)
        return cls(ref, price, bounds)

    def bound(self, request: GenerateRequest) -> Bound:
        """The most `request` can cost (`bounds`); nothing for an offline baseline."""
        if self.ref.provider == "offline" or not request.messages:
            return FREE if self.price is not None else Bound(None, 0)
        return self.bounds.bound(request)

    def observe(self, request: GenerateRequest, usage: Usage | None) -> None:
        self.bounds.observe(request, usage)

    def gate(self, config: EvalConfig, rundir: RunDir, shared: Ledger | None = None) -> BudgetGate | None:
        if config.max_cost is None and config.max_tokens_total is None and shared is None:
            return None
        try:
            return BudgetGate.for_run(
                max_cost=config.max_cost,
                max_tokens=config.max_tokens_total,
                price=self.price,
                spent=run_cost(rundir.predictions_path, self.price),
                shared=shared,
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
            "queue_refusals": outcome.queue_refusals,
            "notes": outcome.notes,
        }
        for note in outcome.notes:
            console.print(f"[yellow]note[/]: {escape(note)}")
    return stop
