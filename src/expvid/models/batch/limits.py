"""The providers' batch size limits, which submitted chunks stay within.

- OpenAI Batch API: at most 50,000 requests per batch and an input file of at most 200 MB
  (Batch API guide, "Rate limits"); one model per batch; `completion_window` "24h".
- Anthropic Message Batches: at most 100,000 requests or 256 MB per batch, whichever comes first
  (Message Batches guide, "Batch limitations"); results available for 29 days.

A run may ask for smaller chunks (`--batch-max-requests`), never larger ones.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchLimits:
    max_requests: int
    max_bytes: int
    source: str


OPENAI = BatchLimits(50_000, 200 * 1024 * 1024, "OpenAI Batch API: 50,000 requests, 200 MB input file")
ANTHROPIC = BatchLimits(100_000, 256 * 1024 * 1024, "Anthropic Message Batches: 100,000 requests or 256 MB")
#: Room kept under the byte limit for the JSON around the lines (Anthropic's {"requests": [...]}).
ENVELOPE_BYTES = 64 * 1024


def limits_for(provider: str) -> BatchLimits:
    return OPENAI if provider == "openai" else ANTHROPIC


def chunk_limits(provider: str, max_requests: int | None, max_bytes: int | None) -> BatchLimits:
    """The provider's limits, tightened by the run's own wishes (never loosened)."""
    limits = limits_for(provider)
    requests = min(limits.max_requests, max_requests) if max_requests else limits.max_requests
    size = min(limits.max_bytes, max_bytes) if max_bytes else limits.max_bytes
    return BatchLimits(requests, size - ENVELOPE_BYTES if size > 2 * ENVELOPE_BYTES else size, limits.source)
