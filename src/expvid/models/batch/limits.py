"""The providers' batch limits, which submitted chunks stay within.

Per batch:

- OpenAI Batch API: at most 50,000 requests per batch and an input file of at most 200 MB
  (Batch API guide, "Rate limits"); one model per batch; `completion_window` "24h".
- Anthropic Message Batches: at most 100,000 requests or 256 MB per batch, whichever comes first
  (Message Batches guide, "Batch limitations"); results available for 29 days.
- Gemini batch mode, inline requests: a request of at most 20 MB in all (Batch mode guide,
  "Inline requests": larger jobs go through the File API, which expvid does not use).

A run may ask for smaller chunks (`--batch-option max_requests=N`), never larger ones.

Per organisation, OpenAI also limits the *enqueued* prompt tokens of each model: the input
tokens of every batch of that model not yet finished ("Batch queue limit" of each model's page,
per usage tier). A batch that would pass it fails validation with `token_limit_exceeded`; nothing
runs and nothing is billed. `QUEUE_LIMITS` holds the documented limits of the models expvid's
campaigns use, per tier (1-5); chunks are sized to fit the room left under the run's tier
(`--batch-option tier=N`, or `queue_tokens=N` for an organisation's own figure). Without either, a
chunk is not sized by tokens until the provider refuses one: its refusal states the limit, which
is used from then on.
"""

from __future__ import annotations

from dataclasses import dataclass

from expvid.models.pricing import undated_name


@dataclass(frozen=True)
class BatchLimits:
    max_requests: int
    max_bytes: int
    source: str


OPENAI = BatchLimits(50_000, 200 * 1024 * 1024, "OpenAI Batch API: 50,000 requests, 200 MB input file")
ANTHROPIC = BatchLimits(100_000, 256 * 1024 * 1024, "Anthropic Message Batches: 100,000 requests or 256 MB")
GEMINI = BatchLimits(100_000, 20 * 1024 * 1024, "Gemini batch mode: inline requests of at most 20 MB")
#: Room kept under the byte limit for the JSON around the lines (Anthropic's {"requests": [...]}).
ENVELOPE_BYTES = 64 * 1024

#: OpenAI "Batch queue limit" (enqueued prompt tokens) per usage tier 1-5, by undated model name: the
#: models' rate-limit tables (cdn.openai.com/API/docs/txt/llms-models-pricing.txt: chatgpt-4o-latest,
#: the gpt-4o figures; the tier-1/2 figures of gpt-4o-mini as its page gave them) and OpenAI's raise
#: of 2025-09-12 for gpt-5 (tier 1 1.5M, tier 2 3M) and gpt-5-mini (tier 1 5M). None: no figure
#: found for that tier; a lower tier's figure is used (the limit only grows with the tier).
QUEUE_LIMITS: dict[str, tuple[int | None, ...]] = {
    "gpt-4o": (90_000, 1_350_000, 50_000_000, 200_000_000, 5_000_000_000),
    "chatgpt-4o": (90_000, 1_350_000, 50_000_000, 200_000_000, 5_000_000_000),
    "gpt-4o-mini": (2_000_000, 20_000_000, None, None, None),
    "gpt-5": (1_500_000, 3_000_000, None, None, None),
    "gpt-5-mini": (5_000_000, None, None, None, None),
}
QUEUE_SOURCE = "OpenAI model pages, 'Batch queue limit' per usage tier"


def limits_for(provider: str) -> BatchLimits:
    return {"openai": OPENAI, "gemini": GEMINI}.get(provider, ANTHROPIC)


def chunk_limits(provider: str, max_requests: int | None, max_bytes: int | None) -> BatchLimits:
    """The provider's limits, tightened by the run's own wishes (never loosened)."""
    limits = limits_for(provider)
    requests = min(limits.max_requests, max_requests) if max_requests else limits.max_requests
    size = min(limits.max_bytes, max_bytes) if max_bytes else limits.max_bytes
    return BatchLimits(requests, size - ENVELOPE_BYTES if size > 2 * ENVELOPE_BYTES else size, limits.source)


def queue_limit(provider: str, model: str, tier: int | None, tokens: int | None) -> int | None:
    """The enqueued-token limit to size chunks by: `tokens` when given, else the documented figure
    of `model` at `tier` (None: not known, chunks are not sized by tokens until a refusal says)."""
    if tokens is not None:
        return tokens
    if provider != "openai" or tier is None:
        return None
    figures = QUEUE_LIMITS.get(undated_name(model))
    if figures is None:
        return None
    known = [figure for figure in figures[:tier] if figure is not None]
    return figures[tier - 1] if figures[tier - 1] is not None else (known[-1] if known else None)
