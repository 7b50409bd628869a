"""What a model costs per token: a small maintained price table, and the user's own prices on top.

Prices are USD per one million tokens at the providers' standard (on-demand) tier, as their price
pages listed them on `PRICES_AS_OF`. They change; a run records the price it used (and where it came
from) in its manifest, and `--price MODEL=IN,OUT` overrides the table for any model, so a lab with
negotiated prices, or a model newer than this table, is priced right. A model the table does not
know, and a self-hosted server (vLLM, SGLang, `hf:`), has no price: its cost is reported as unknown,
never as 0. A provider's model reached through another host (a gateway serving `gpt-4o` by that
name) is priced as the provider's model, and the source says so. Offline baselines (`random`,
...) cost nothing.

Batch APIs (OpenAI Batch, Anthropic Message Batches, Gemini batch mode) bill half the standard
price for input and output: `BATCH_DISCOUNT`.

Which tokens are output: OpenAI and Anthropic count reasoning (thinking) tokens inside the
completion tokens they report; Gemini reports them apart (`thoughtsTokenCount`) and bills them as
output, so for Gemini they are added (`Price.reasoning_separate`).

Long-context tiers (Gemini 2.5 Pro above 200k prompt tokens, Claude Sonnet 4.x above 200k) are
priced by `Price.long_context`: the whole request at the higher rate once its prompt passes
the threshold, as those providers bill.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, Field

PRICES_AS_OF = "2025-11"
BATCH_DISCOUNT = 0.5
Provider = Literal["openai", "anthropic", "gemini", "self-hosted", "offline"]


class LongContext(BaseModel):
    """A higher rate for the whole request once its prompt has more than `threshold` tokens."""

    threshold: int = Field(gt=0)
    input_per_m: float = Field(ge=0)
    output_per_m: float = Field(ge=0)


class Price(BaseModel):
    """USD per one million tokens."""

    input_per_m: float = Field(ge=0)
    output_per_m: float = Field(ge=0)
    #: Reasoning tokens are reported apart from the completion tokens and billed as output (Gemini).
    reasoning_separate: bool = False
    long_context: LongContext | None = None
    #: Where the price comes from: "table 2025-11 (gpt-4o)", "--price", ...
    source: str = ""

    def cost(self, prompt_tokens: int, completion_tokens: int, reasoning_tokens: int = 0) -> float:
        """USD for one request's (or a sum of requests') tokens at this price."""
        rate_in, rate_out = self.input_per_m, self.output_per_m
        tier = self.long_context
        if tier is not None and prompt_tokens > tier.threshold:
            rate_in, rate_out = tier.input_per_m, tier.output_per_m
        output = completion_tokens + (reasoning_tokens if self.reasoning_separate else 0)
        return (prompt_tokens * rate_in + output * rate_out) / 1_000_000

    def label(self) -> str:
        return f"{self.input_per_m:g}/{self.output_per_m:g} USD per 1M tokens in/out"


def _p(
    input_per_m: float,
    output_per_m: float,
    *,
    reasoning_separate: bool = False,
    long_context: tuple[int, float, float] | None = None,
) -> Price:
    tier = None
    if long_context is not None:
        threshold, tier_in, tier_out = long_context
        tier = LongContext(threshold=threshold, input_per_m=tier_in, output_per_m=tier_out)
    return Price(
        input_per_m=input_per_m,
        output_per_m=output_per_m,
        reasoning_separate=reasoning_separate,
        long_context=tier,
    )


#: Standard-tier prices by provider and model name (lower case, no date suffix).
PRICE_TABLE: dict[str, dict[str, Price]] = {
    "openai": {
        "gpt-4o": _p(2.50, 10.00),
        "gpt-4o-mini": _p(0.15, 0.60),
        "gpt-4.1": _p(2.00, 8.00),
        "gpt-4.1-mini": _p(0.40, 1.60),
        "gpt-4.1-nano": _p(0.10, 0.40),
        "gpt-5": _p(1.25, 10.00),
        "gpt-5-mini": _p(0.25, 2.00),
        "gpt-5-nano": _p(0.05, 0.40),
        "gpt-5-pro": _p(15.00, 120.00),
        "gpt-5.1": _p(1.25, 10.00),
        "o1": _p(15.00, 60.00),
        "o1-pro": _p(150.00, 600.00),
        "o3": _p(2.00, 8.00),
        "o3-pro": _p(20.00, 80.00),
        "o4-mini": _p(1.10, 4.40),
    },
    "anthropic": {
        "claude-opus-4-5": _p(5.00, 25.00),
        "claude-opus-4-1": _p(15.00, 75.00),
        "claude-opus-4": _p(15.00, 75.00),
        "claude-sonnet-4-5": _p(3.00, 15.00, long_context=(200_000, 6.00, 22.50)),
        "claude-sonnet-4": _p(3.00, 15.00, long_context=(200_000, 6.00, 22.50)),
        "claude-3-7-sonnet": _p(3.00, 15.00),
        "claude-3-5-sonnet": _p(3.00, 15.00),
        "claude-haiku-4-5": _p(1.00, 5.00),
        "claude-3-5-haiku": _p(0.80, 4.00),
    },
    "gemini": {
        "gemini-2.5-pro": _p(1.25, 10.00, reasoning_separate=True, long_context=(200_000, 2.50, 15.00)),
        "gemini-2.5-flash": _p(0.30, 2.50, reasoning_separate=True),
        "gemini-2.5-flash-lite": _p(0.10, 0.40, reasoning_separate=True),
        "gemini-2.0-flash": _p(0.10, 0.40, reasoning_separate=True),
        "gemini-2.0-flash-lite": _p(0.075, 0.30, reasoning_separate=True),
        "gemini-1.5-pro": _p(1.25, 5.00, reasoning_separate=True, long_context=(128_000, 2.50, 10.00)),
        "gemini-1.5-flash": _p(0.075, 0.30, reasoning_separate=True, long_context=(128_000, 0.15, 0.60)),
    },
}

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")
_OPENAI_HOSTS = ("api.openai.com",)
_AZURE_SUFFIX = ".openai.azure.com"


@dataclass(frozen=True)
class ModelRef:
    """Which provider bills a model spec, and the model's name there."""

    provider: Provider
    model: str
    #: The provider whose image rule and price table to use when it differs from who serves it
    #: (a gpt-4o behind a proxy is still priced and tokenised as gpt-4o): None = `provider`.
    family: str | None = None

    @property
    def table(self) -> str:
        return self.family or self.provider


def model_ref(spec: str, base_url: str | None = None) -> ModelRef:
    """The provider and model of a model spec (`openai:gpt-4o`, `anthropic:...`, `blind:...`, `vllm:PATH`)."""
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "blind":
        return model_ref(rest, base_url)
    if kind in ("random", "longest-option", "first-option"):
        return ModelRef("offline", kind)
    if kind in ("hf", "vllm"):
        return ModelRef("self-hosted", rest.rstrip("/").rsplit("/", 1)[-1])
    model, _, url = rest.partition("@")
    url = url or base_url or ""
    if kind == "openai":
        if url and not _is_openai_host(url):
            return ModelRef("self-hosted", model, family=_family_of(model))
        return ModelRef("openai", model)
    if kind in ("anthropic", "gemini"):
        return ModelRef(kind, model)  # type: ignore[arg-type]
    return ModelRef("self-hosted", rest or kind)


def _is_openai_host(url: str) -> bool:
    host = (urlparse(url.split(",")[0]).hostname or "").lower()
    return host in _OPENAI_HOSTS or host.endswith(_AZURE_SUFFIX)


def _family_of(model: str) -> str | None:
    """The provider whose models a self-hosted name mimics (a proxy serving `gpt-4o`), if any."""
    name = bare_name(model)
    for provider, models in PRICE_TABLE.items():
        if _lookup(models, name) is not None:
            return provider
    return None


def bare_name(model: str) -> str:
    """'openai/gpt-4o-2024-08-06' -> 'gpt-4o-2024-08-06' (lower case, a gateway's prefix removed)."""
    return model.strip().lower().rsplit("/", 1)[-1]


def _lookup(models: dict[str, Price], name: str) -> tuple[str, str] | None:
    """(table key, how it matched) for `name`: exact, without a date suffix, or the longest key it
    extends at a '-' boundary (`gemini-2.5-pro-preview-06-05` -> `gemini-2.5-pro`)."""
    if name in models:
        return name, "exact"
    undated = _DATE_SUFFIX.sub("", name)
    if undated in models:
        return undated, "dated"
    extending = [key for key in models if undated.startswith(key + "-") or undated.startswith(key + ".")]
    if extending:
        return max(extending, key=len), "prefix"
    return None


def table_price(ref: ModelRef) -> Price | None:
    """The table's price for a model, with `source` saying how it was found; None when unknown."""
    if ref.provider == "offline":
        return Price(input_per_m=0, output_per_m=0, source="offline baseline: no API cost")
    if ref.provider == "self-hosted" and ref.family is None:
        return None  # a self-hosted server has no per-token price unless the user gives one
    models = PRICE_TABLE.get(ref.table, {})
    found = _lookup(models, bare_name(ref.model))
    if found is None:
        return None
    key, how = found
    source = (
        f"price table {PRICES_AS_OF} ({ref.table} {key}" + ("" if how == "exact" else f", {how} match") + ")"
    )
    if ref.provider == "self-hosted":
        # A gateway or proxy serving the provider's model by its name: billed as the provider bills it.
        source += f"; served by another host, priced as {ref.table}'s model"
    return models[key].model_copy(update={"source": source})


def parse_price_override(text: str) -> tuple[str | None, Price]:
    """`MODEL=IN,OUT` (USD per 1M tokens) or `IN,OUT` (the evaluated model) -> (model or None, price).

    MODEL is a model name as the spec names it (`gpt-4o`, `claude-sonnet-4-20250514`) or a whole
    spec (`openai:gpt-4o`). Raises ValueError with the expected form.
    """
    model, sep, numbers = text.rpartition("=")
    if not sep:
        model, numbers = "", text
    try:
        values = [float(part) for part in numbers.split(",")]
    except ValueError:
        values = []
    if len(values) != 2 or any(v < 0 for v in values):
        raise ValueError(f"{text!r}: expected [MODEL=]IN,OUT in USD per 1M tokens, e.g. gpt-4o=2.5,10")
    name = model.strip() or None
    return name, Price(input_per_m=values[0], output_per_m=values[1], source=f"--price {text}")


def price_for(
    spec: str, overrides: dict[str, Price] | None = None, base_url: str | None = None
) -> Price | None:
    """The price a run uses for `spec`: an override naming the spec or its model, else the table's."""
    overrides = overrides or {}
    ref = model_ref(spec, base_url)
    for key in (spec.strip(), ref.model, bare_name(ref.model), ""):
        if key in overrides:
            chosen = overrides[key]
            # Gemini bills reasoning apart whatever the user's rates are.
            separate = ref.table == "gemini"
            return chosen.model_copy(update={"reasoning_separate": separate or chosen.reasoning_separate})
    return table_price(ref)
