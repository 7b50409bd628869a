"""A price per token, and what one request costs at it.

Kept apart from the price table (`price_table`) and the model-name lookup (`pricing`) so that the
table can be data only. Prices are USD per one million tokens.

How a request is billed (each provider's pricing page, see `price_table.PRICE_SOURCES`):

- input tokens at the input rate, except the part the provider served from its prompt cache
  (OpenAI `prompt_tokens_details.cached_tokens`, Gemini `cachedContentTokenCount`; both are
  included in the prompt count) at the cached-input rate where the provider lists one;
- output tokens at the output rate; OpenAI and Anthropic count reasoning (thinking) tokens inside
  the completion tokens they report, Gemini reports them apart and bills them as output
  (`reasoning_separate`);
- a long-context tier (Gemini 2.5 Pro above 200k prompt tokens, ...) prices the *whole request*,
  output included, at the higher rates once that request's prompt passes the threshold. The tier
  is decided per request: `cost` must be called with one request's tokens, never with a sum.
- batch APIs bill half of all of that (`BATCH_DISCOUNT`, applied by the caller).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

#: OpenAI Batch, Anthropic Message Batches and Gemini batch mode bill 50% of the standard price.
BATCH_DISCOUNT = 0.5


class LongContext(BaseModel):
    """Higher rates for a whole request once its prompt has more than `threshold` tokens."""

    threshold: int = Field(gt=0)
    input_per_m: float = Field(ge=0)
    output_per_m: float = Field(ge=0)
    cached_input_per_m: float | None = Field(default=None, ge=0)


class Price(BaseModel):
    """USD per one million tokens."""

    input_per_m: float = Field(ge=0)
    output_per_m: float = Field(ge=0)
    #: Prompt tokens served from the provider's prompt cache; None: billed as ordinary input.
    cached_input_per_m: float | None = Field(default=None, ge=0)
    #: Reasoning tokens are reported apart from the completion tokens and billed as output (Gemini).
    reasoning_separate: bool = False
    long_context: LongContext | None = None
    #: Where the price comes from: the table's provider page and the date it was checked, "--price".
    source: str = ""

    def cost(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        reasoning_tokens: int = 0,
        cache_read_tokens: int = 0,
    ) -> float:
        """USD for ONE request's tokens (the long-context tier is decided by this request's prompt).

        `cache_read_tokens` is the part of `prompt_tokens` the provider served from its prompt cache."""
        rate_in, rate_out, rate_cached = self.input_per_m, self.output_per_m, self.cached_input_per_m
        tier = self.long_context
        if tier is not None and prompt_tokens > tier.threshold:
            rate_in, rate_out, rate_cached = tier.input_per_m, tier.output_per_m, tier.cached_input_per_m
        cached = min(max(cache_read_tokens, 0), prompt_tokens)
        if rate_cached is None:
            rate_cached, cached = rate_in, 0
        output = completion_tokens + (reasoning_tokens if self.reasoning_separate else 0)
        return ((prompt_tokens - cached) * rate_in + cached * rate_cached + output * rate_out) / 1_000_000

    def label(self) -> str:
        return f"{self.input_per_m:g}/{self.output_per_m:g} USD per 1M tokens in/out"
