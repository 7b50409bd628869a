"""What a model costs per token: the maintained price table, and the user's own prices on top.

The table (`price_table`) lists the providers' standard (on-demand) prices, each provider with the
page it was checked against and the date; a run records the price it used (and where it came
from) in its manifest, and `--price MODEL=IN,OUT` overrides the table for any model, so a lab with
negotiated prices, or a model newer than this table, is priced right. A model the table does not
know, and a self-hosted server (vLLM, SGLang, `hf:`), has no price: its cost is reported as
unknown, never as 0. A provider's model reached through another host (a gateway serving `gpt-4o`
by that name) is priced as the provider's model, and the source says so. Offline baselines
(`random`, ...) cost nothing.

Names are matched exactly, without a date suffix (`-2025-08-07`, `-20250514`, `-latest`), or as a
preview / experimental / numbered revision of a listed model (`gemini-2.5-pro-preview-06-05`,
`gemini-2.0-flash-001`). Nothing else: `claude-opus-4-6` is not `claude-opus-4`, `gpt-5.2` is not
`gpt-5`, `o3-mini` is not `o3`; a newer version gets no price rather than an older one's.

How a request is billed (cached input, reasoning tokens, long-context tiers, batch discount):
`price_types`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlparse

from expvid.models.price_table import PRICE_SOURCES, PRICE_TABLE
from expvid.models.price_types import BATCH_DISCOUNT, LongContext, Price

__all__ = [
    "BATCH_DISCOUNT",
    "PRICE_TABLE",
    "LongContext",
    "ModelRef",
    "Price",
    "bare_name",
    "model_ref",
    "parse_price_override",
    "price_for",
    "table_price",
    "undated_name",
]

Provider = Literal["openai", "anthropic", "gemini", "self-hosted", "offline"]

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


#: What may follow a listed name and still be that model at its price: a preview or experimental
#: release (with its own date), or a numbered revision (`-001`).
_SAME_MODEL_SUFFIX = re.compile(r"^-(?:(?:preview|exp)(?:-[0-9a-z]+)*|\d{3})$")


def undated_name(model: str) -> str:
    """'openai/gpt-4o-2024-08-06' -> 'gpt-4o'; 'claude-3-5-haiku-latest' -> 'claude-3-5-haiku'."""
    return _DATE_SUFFIX.sub("", bare_name(model))


def _lookup(models: dict[str, Price], name: str) -> tuple[str, str] | None:
    """(table key, how it matched) for `name`: exact, without a date suffix, or a preview /
    experimental / numbered revision of a listed model (`gemini-2.5-pro-preview-06-05`)."""
    if name in models:
        return name, "exact"
    undated = _DATE_SUFFIX.sub("", name)
    if undated in models:
        return undated, "dated"
    variants = [
        key
        for key in models
        if undated.startswith(key) and _SAME_MODEL_SUFFIX.match(undated[len(key) :]) is not None
    ]
    if variants:
        return max(variants, key=len), "variant"
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
    where = PRICE_SOURCES[ref.table].describe()
    source = f"price table: {ref.table} {key}" + ("" if how == "exact" else f" ({how} match)") + f"; {where}"
    if ref.provider == "self-hosted":
        # A gateway or proxy serving the provider's model by its name: billed as the provider bills it.
        source += f"; served by another host, priced as {ref.table}'s model"
    return models[key].model_copy(update={"source": source})


def parse_price_override(text: str) -> tuple[str | None, Price]:
    """`MODEL=IN,OUT[,CACHED]` (USD per 1M tokens) or `IN,OUT[,CACHED]` (the evaluated model) ->
    (model or None, price).

    MODEL is a model name as the spec names it (`gpt-4o`, `claude-sonnet-4-20250514`) or a whole
    spec (`openai:gpt-4o`). CACHED prices the prompt tokens the provider reports as read from its
    prompt cache (without it they cost IN). The override replaces the whole table entry, long-context
    tier included. Raises ValueError with the expected form.
    """
    model, sep, numbers = text.rpartition("=")
    if not sep:
        model, numbers = "", text
    try:
        values = [float(part) for part in numbers.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or any(v < 0 for v in values):
        raise ValueError(
            f"{text!r}: expected [MODEL=]IN,OUT[,CACHED] in USD per 1M tokens, e.g. gpt-4o=2.5,10,1.25"
        )
    name = model.strip() or None
    cached = values[2] if len(values) == 3 else None
    price = Price(
        input_per_m=values[0], output_per_m=values[1], cached_input_per_m=cached, source=f"--price {text}"
    )
    return name, price


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
