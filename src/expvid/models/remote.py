"""What every remote backend shares: image cap, cache, adaptive limiter, retries, counters.

Subclasses only translate: `_prepare` turns a request into their wire payload (once, not per retry),
`_send_once` makes one attempt and either returns a response or raises `AttemptFailure`. Keeping the
policy here means OpenAI-compatible, Anthropic and Gemini backends retry, back off and cache the same way.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any

from expvid.models.cache import ResponseCache, cache_key, cached_response
from expvid.models.limiter import AdaptiveLimiter
from expvid.models.options import BackendOptions
from expvid.models.retry import AttemptFailure, backoff_delay
from expvid.models.stats import BackendStats
from expvid.models.types import BackendError, GenerateRequest, GenerateResponse, field_values
from expvid.schema import ErrorKind

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImageLimit:
    """A provider's cap on images per request, and where it is stated (recorded and reported)."""

    max_images: int
    source: str

    def describe(self) -> dict[str, object]:
        return field_values(self)


def check_image_cap(request: GenerateRequest, max_images: int | None, backend: str) -> None:
    """Refuse a request over the cap instead of silently sending fewer frames than the runner logged."""
    if max_images is not None and request.n_images > max_images:
        item = request.metadata.get("item_id")
        where = f" for item {item}" if item is not None else ""
        raise BackendError(
            f"{backend}: request{where} has {request.n_images} images, over max_images={max_images}; "
            "sample at most that many frames"
        )


class RemoteBackend(ABC):
    """Base of the backends that call a server. Safe to use from many tasks of one event loop."""

    kind: str = "remote"
    #: The provider's own cap on images per request (None: none known). The runner samples at most
    #: this many frames and says so in the manifest and reports.
    image_limit: ImageLimit | None = None

    def __init__(self, model: str, *, base_url: str | None, options: BackendOptions) -> None:
        self.model = model
        self.base_url = base_url
        self.options = options
        self.name = f"{self.kind}:{model}"
        self.limiter = AdaptiveLimiter(options.concurrency, grow_after=options.grow_after)
        self.cache = ResponseCache(options.cache_dir) if options.cache_dir is not None else None
        self._counters = BackendStats()
        self._rng = random.Random()
        self._client_instance: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- what subclasses provide -------------------------------------------------------------

    @abstractmethod
    def _prepare(self, request: GenerateRequest) -> Any:
        """Build the wire payload for `request` (called once per generate, reused by retries)."""

    @abstractmethod
    async def _send_once(self, payload: Any) -> GenerateResponse:
        """One attempt; raise AttemptFailure on any failure. Must not retry by itself."""

    def _sent_for(self, payload: Any) -> dict[str, Any]:
        """What `payload` sends, for the prediction's record (backends that compose per attempt set
        `GenerateResponse.sent` themselves)."""
        return {}

    def _wire_options(self) -> dict[str, Any]:
        """Settings that change what is sent, beyond the request itself (they join the cache key)."""
        return {"extra_body": self.options.extra_body}

    def _describe_extra(self) -> dict[str, Any]:
        return {}

    @abstractmethod
    def _new_client(self) -> Any:
        """A fresh SDK / HTTP client (clients hold connections bound to one event loop)."""

    async def _close_client(self, client: Any) -> None:
        return None

    def _client(self) -> Any:
        """The client for the running event loop, made on first use.

        Clients, their pooled connections and asyncio primitives belong to one event loop. A backend
        reused under a later `asyncio.run()` gets a fresh client and limiter condition instead of
        failing with "Event loop is closed"; the old loop's connections died with it.
        """
        loop = asyncio.get_running_loop()
        if self._client_instance is None or self._client_loop is not loop:
            self._client_instance = self._new_client()
            self._client_loop = loop
            self.limiter.rebind()
        return self._client_instance

    # -- the protocol ------------------------------------------------------------------------

    @property
    def max_images(self) -> int | None:
        """The cap that applies: the run's (`max_images`), else the provider's own."""
        if self.options.max_images is not None:
            return self.options.max_images
        return None if self.image_limit is None else self.image_limit.max_images

    def input_modes(self) -> tuple[str, ...]:
        """How this backend can take a video's frames (the runner refuses a run it cannot serve)."""
        return ("images",)

    @property
    def reasoning_model(self) -> bool:
        """Whether the model spends output tokens on reasoning by default (known from its rules);
        judges give such a model a token budget that leaves room for the answer."""
        return False

    def request_hash(self, request: GenerateRequest) -> str:
        extra = self._wire_options()
        if request.input_mode != "images":  # images keep the keys they always had
            extra = {**extra, "input_mode": request.input_mode}
        return cache_key(
            request,
            backend=self.kind,
            model=self.model,
            base_url=self.base_url,
            extra=extra,
            scope=self.options.cache_scope,
        )

    async def cached_response(self, request: GenerateRequest) -> GenerateResponse | None:
        """The cached answer to `request`, without sending anything (None: not cached, or no cache)."""
        if self.cache is None:
            return None
        return await self.cache.aget(self.request_hash(request))

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        check_image_cap(request, self.max_images, self.name)
        key = self.request_hash(request)
        hit = await cached_response(self.cache, key, self._counters)
        if hit is not None:
            return hit
        response = await self._send_with_retries(request)
        response = response.model_copy(update={"request_hash": key})
        if self.cache is not None:
            await self.cache.aput(key, response)
        return response

    async def _send_with_retries(self, request: GenerateRequest) -> GenerateResponse:
        self._client()  # bind to this event loop before taking a slot
        payload = self._prepare(request)
        attempt = 0
        while True:
            async with self.limiter.slot() as slot:
                self._counters.requests += 1
                started = time.monotonic()
                try:
                    response = await self._send_once(payload)
                except AttemptFailure as failure:
                    error = failure
                    if failure.rate_limited:
                        self.limiter.on_overload(slot)
                except Exception as unexpected:
                    # An SDK raising something we did not map: fail this item clearly (with the
                    # original chained), never the whole run.
                    self._counters.failures += 1
                    raise BackendError(
                        f"{self.name}: unexpected {type(unexpected).__name__}: {unexpected}",
                        kind=ErrorKind.OTHER,
                    ) from unexpected
                else:
                    self._counters.successes += 1
                    self.limiter.on_success()
                    update: dict[str, Any] = {"latency_s": time.monotonic() - started}
                    if not response.sent:
                        update["sent"] = self._sent_for(payload)
                    return response.model_copy(update=update)
            self._count(error)
            if not error.retryable or attempt >= self.options.max_retries:
                self._counters.failures += 1
                tries = attempt + 1
                raise BackendError(
                    f"{self.name}: {error.message} (after {tries} attempt{'s' if tries > 1 else ''})",
                    kind=error.kind,
                    status=error.status,
                    sent=error.sent or self._sent_for(payload),
                    unreachable=error.unreachable,
                )
            delay = self._delay_before_retry(error, attempt)
            log.debug("%s: %s; retry %d in %.2f s", self.name, error.message, attempt + 1, delay)
            attempt += 1
            self._counters.retries += 1
            await asyncio.sleep(delay)

    def _delay_before_retry(self, error: AttemptFailure, attempt: int) -> float:
        if error.retry_after_s is not None:
            return min(error.retry_after_s, self.options.max_retry_after_s)
        return backoff_delay(
            attempt, base_s=self.options.backoff_base_s, max_s=self.options.backoff_max_s, rng=self._rng
        )

    def _count(self, error: AttemptFailure) -> None:
        counter = {
            "rate_limited": "rate_limited",
            "server_error": "server_errors",
            "timeout": "timeouts",
            "network": "network_errors",
            "malformed": "malformed",
        }.get(error.category)
        if counter is not None:
            setattr(self._counters, counter, getattr(self._counters, counter) + 1)

    def stats(self) -> BackendStats:
        return replace(self._counters, **self.limiter.gauges())

    def describe(self) -> dict[str, Any]:
        options = self.options
        return {
            "name": self.name,
            "kind": self.kind,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self._api_key_env(),
            "timeout_s": options.timeout_s,
            "max_retries": options.max_retries,
            "concurrency": options.concurrency,
            "max_images": self.max_images,
            "image_limit": None if self.image_limit is None else self.image_limit.describe(),
            "cache_dir": None if options.cache_dir is None else str(options.cache_dir),
            "extra_body": options.extra_body,
            **self._describe_extra(),
        }

    def _api_key_env(self) -> str | None:
        return self.options.api_key_env

    async def aclose(self) -> None:
        client, self._client_instance = self._client_instance, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await self._close_client(client)
        if self.cache is not None:
            self.cache.close()
