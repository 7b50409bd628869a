"""Providers' batch APIs (OpenAI Batch over chat completions or responses, Anthropic Message Batches,
Gemini batch mode).

`adapter.batch_adapter(backend)` turns a built backend into what a batch run needs: the provider's
request line for a `GenerateRequest` (composed by the backend's own wire code, so a batched request
is exactly the online one), the parser of a result body (the backend's own parser), and a client of
the provider's batch endpoints (`openai_batch`, `anthropic_batch`, `gemini_batch`) that submits, polls, fetches
results and cancels. `limits` holds the providers' size limits that chunks are cut to.
"""

from expvid.models.batch.adapter import BatchAdapter, batch_adapter
from expvid.models.batch.types import (
    BatchAPIError,
    BatchHandle,
    BatchLabel,
    BatchResult,
    BatchState,
    Lookup,
    RequestError,
)

__all__ = [
    "BatchAPIError",
    "BatchAdapter",
    "BatchHandle",
    "BatchLabel",
    "BatchResult",
    "BatchState",
    "Lookup",
    "RequestError",
    "batch_adapter",
]
