"""The maintained price table: standard (on-demand) prices by provider and model, with their source.

Every entry was checked against the provider's pricing page on the date in `PRICE_SOURCES`; a run
records the price it used and this source in its manifest, and `--price MODEL=IN,OUT` overrides
any entry. Keys are model names in lower case without a date suffix. Models whose prices the
pages did not settle (announced changes, introductory prices) are left out on purpose: an
unknown price is reported as unknown and asks for `--price`, a wrong one would be silently used.

What was checked, per provider (USD per 1M tokens; "cached" = prompt-cache reads):

- OpenAI (platform.openai.com/docs/pricing, standard tier): input, cached input and output of
  every entry. OpenAI's page itself is not in the stored copies searched; each figure was matched
  against at least two transcriptions of it (a dated copy of the page in a client library, a price
  dataset that cites the page, a transcription read from the page in 2026). `gpt-4o-2024-05-13`
  keeps its own, higher price (a date suffix is not always the base model's price).
  No long-context tier applies to these models. Batch: 50% of input and output.
- Anthropic (platform.claude.com/docs/en/about-claude/pricing, "Model pricing" and "Long context
  pricing"): base input and output. Sonnet 4 / 4.5 requests with more than 200k input tokens
  are billed at $6 / $22.50 for the whole request, which only happens with the 1M-token context
  beta (without it such a request is refused; expvid does not send the beta header and Claude
  takes at most 100 images, so expvid's requests stay under the threshold). Sonnet 4.6 and
  Opus 4.6 are flat over their whole window since 2026-03-13. Cache prices are left out:
  expvid sends no `cache_control`, so nothing is written to or read from Claude's cache.
  Message Batches: 50%.
- Gemini (ai.google.dev/gemini-api/docs/pricing, paid tier): input (text / image / video),
  output *including thinking tokens*, context-caching price, and the prompt tiers: 2.5 Pro and
  3 / 3.1 Pro cost more for the whole request once its prompt passes 200k tokens (expvid's
  requests can: 600 frames of 1280x720, two 768 px tiles of 258 tokens each, are 310k tokens),
  1.5 Pro / Flash above 128k (retired models, historical prices). Implicit caching reports `cachedContentTokenCount`. Batch: 50%.
"""

from __future__ import annotations

from dataclasses import dataclass

from expvid.models.price_types import LongContext, Price


@dataclass(frozen=True)
class PriceSource:
    url: str
    checked: str  # ISO date the table's entries for this provider were last checked

    def describe(self) -> str:
        return f"{self.url}, checked {self.checked}"


PRICE_SOURCES: dict[str, PriceSource] = {
    "openai": PriceSource("https://platform.openai.com/docs/pricing", "2026-11-26"),
    "anthropic": PriceSource("https://platform.claude.com/docs/en/about-claude/pricing", "2026-11-26"),
    "gemini": PriceSource("https://ai.google.dev/gemini-api/docs/pricing", "2026-11-26"),
}


def _p(
    input_per_m: float,
    output_per_m: float,
    cached: float | None = None,
    *,
    gemini: bool = False,
    tier: tuple[int, float, float, float | None] | None = None,
) -> Price:
    long_context = None
    if tier is not None:
        threshold, tier_in, tier_out, tier_cached = tier
        long_context = LongContext(
            threshold=threshold, input_per_m=tier_in, output_per_m=tier_out, cached_input_per_m=tier_cached
        )
    return Price(
        input_per_m=input_per_m,
        output_per_m=output_per_m,
        cached_input_per_m=cached,
        reasoning_separate=gemini,
        long_context=long_context,
    )


_CLAUDE_1M_BETA = (200_000, 6.00, 22.50, None)

PRICE_TABLE: dict[str, dict[str, Price]] = {
    "openai": {
        "gpt-4o": _p(2.50, 10.00, 1.25),
        "gpt-4o-2024-05-13": _p(5.00, 15.00),
        "gpt-4o-mini": _p(0.15, 0.60, 0.075),
        "gpt-4.1": _p(2.00, 8.00, 0.50),
        "gpt-4.1-mini": _p(0.40, 1.60, 0.10),
        "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
        "gpt-5": _p(1.25, 10.00, 0.125),
        "gpt-5-chat": _p(1.25, 10.00, 0.125),
        "gpt-5-mini": _p(0.25, 2.00, 0.025),
        "gpt-5-nano": _p(0.05, 0.40, 0.005),
        "gpt-5-pro": _p(15.00, 120.00),
        "gpt-5.1": _p(1.25, 10.00, 0.125),
        "gpt-5.2": _p(1.75, 14.00, 0.175),
        "o1": _p(15.00, 60.00, 7.50),
        "o1-pro": _p(150.00, 600.00),
        "o3": _p(2.00, 8.00, 0.50),
        "o3-pro": _p(20.00, 80.00),
        "o4-mini": _p(1.10, 4.40, 0.275),
    },
    "anthropic": {
        "claude-opus-4-8": _p(5.00, 25.00),
        "claude-opus-4-7": _p(5.00, 25.00),
        "claude-opus-4-6": _p(5.00, 25.00),
        "claude-opus-4-5": _p(5.00, 25.00),
        "claude-opus-4-1": _p(15.00, 75.00),
        "claude-opus-4": _p(15.00, 75.00),
        "claude-opus-4-0": _p(15.00, 75.00),
        "claude-sonnet-4-6": _p(3.00, 15.00),
        "claude-sonnet-4-5": _p(3.00, 15.00, tier=_CLAUDE_1M_BETA),
        "claude-sonnet-4": _p(3.00, 15.00, tier=_CLAUDE_1M_BETA),
        "claude-sonnet-4-0": _p(3.00, 15.00, tier=_CLAUDE_1M_BETA),
        "claude-3-7-sonnet": _p(3.00, 15.00),
        "claude-3-5-sonnet": _p(3.00, 15.00),
        "claude-haiku-4-5": _p(1.00, 5.00),
        "claude-3-5-haiku": _p(0.80, 4.00),
        "claude-3-haiku": _p(0.25, 1.25),
    },
    "gemini": {
        "gemini-3.1-pro": _p(2.00, 12.00, 0.20, gemini=True, tier=(200_000, 4.00, 18.00, 0.40)),
        "gemini-3-pro": _p(2.00, 12.00, 0.20, gemini=True, tier=(200_000, 4.00, 18.00, 0.40)),
        "gemini-2.5-pro": _p(1.25, 10.00, 0.125, gemini=True, tier=(200_000, 2.50, 15.00, 0.25)),
        "gemini-2.5-flash": _p(0.30, 2.50, 0.03, gemini=True),
        "gemini-2.5-flash-lite": _p(0.10, 0.40, 0.01, gemini=True),
        "gemini-2.0-flash": _p(0.10, 0.40, 0.025, gemini=True),
        "gemini-2.0-flash-lite": _p(0.075, 0.30, gemini=True),
        "gemini-1.5-pro": _p(1.25, 5.00, gemini=True, tier=(128_000, 2.50, 10.00, None)),
        "gemini-1.5-flash": _p(0.075, 0.30, gemini=True, tier=(128_000, 0.15, 0.60, None)),
    },
}
