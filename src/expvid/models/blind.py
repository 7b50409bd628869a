"""`blind:<spec>`: any backend with every image removed (the paper's no-vision ablation).

Frames are still sampled and logged by the runner exactly as for the seeing model; only the request
that leaves for the model is stripped, so the two runs differ in one thing only.
"""

from __future__ import annotations

from typing import Any

from expvid.models.stats import BackendStats, ReportsStats
from expvid.models.types import GenerateRequest, GenerateResponse, ModelBackend


class BlindBackend:
    def __init__(self, inner: ModelBackend) -> None:
        self.inner = inner
        self.name = f"blind:{inner.name}"

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        return await self.inner.generate(request.without_images())

    async def cached_response(self, request: GenerateRequest) -> GenerateResponse | None:
        peek = getattr(self.inner, "cached_response", None)
        return await peek(request.without_images()) if callable(peek) else None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "blind", "inner": self.inner.describe()}

    def stats(self) -> BackendStats:
        return self.inner.stats() if isinstance(self.inner, ReportsStats) else BackendStats()

    async def aclose(self) -> None:
        await self.inner.aclose()
