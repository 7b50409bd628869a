"""One model served by several OpenAI-compatible servers: spread requests, survive a failing node.

`openai:MODEL@http://a:8000/v1,http://b:8000/v1` (or option `base_urls`) gives one backend over
all of them. A team serving a model with vLLM on several nodes, or behind Ray Serve replicas, runs
one `expvid eval` against the lot:

- each endpoint has its own adaptive limiter (AIMD, as a single server has): a node that answers
  429 slows down alone; `concurrency` is shared out evenly unless `endpoint_concurrency` is set;
- each attempt goes to the least loaded endpoint with a free slot, preferring endpoints this
  request has not failed on yet;
- a failed attempt (5xx, dropped connection, timeout, bad body, 429) fails over to another
  endpoint at once, without backoff; it still counts against `max_retries`, so a request cannot
  bounce around forever. Backoff applies only when no other endpoint is left to try;
- an endpoint that fails `endpoint_failures_to_cooldown` times in a row is benched for
  `endpoint_cooldown_s`; then the next request goes to it as ONE probe: success brings it back,
  failure benches it again for twice as long (up to 16x) and the request fails over. Failures
  of requests that were already in flight when it was benched do not extend the bench;
- a request with a final error (400, 401, 413) is the request's fault, not the endpoint's: it is
  not retried and does not count against the endpoint.

Every request is answered once: a retry is a new attempt of the same `generate()` call, whose one
result is what the runner records. Per-endpoint traffic is in `endpoint_stats()` and `describe()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import httpx2

from expvid.models.limiter import AdaptiveLimiter, Slot
from expvid.models.openai_compat import OpenAICompatBackend
from expvid.models.options import BackendOptions
from expvid.models.retry import AttemptFailure
from expvid.models.stats import BackendStats
from expvid.models.types import BackendError, GenerateRequest, GenerateResponse
from expvid.schema import ErrorKind

#: Failure categories that say something about the endpoint's health.
HEALTH_FAILURES = frozenset({"server_error", "timeout", "network", "malformed"})
MAX_BENCH_DOUBLINGS = 4


class EndpointLimiter(AdaptiveLimiter):
    """An AdaptiveLimiter whose slots are taken and returned under the pool's own lock."""

    def try_take(self, cap: int) -> Slot | None:
        if self.in_flight >= min(cap, self.limit):
            return None
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return Slot(self._epoch)

    def give_back(self) -> None:
        self.in_flight = max(0, self.in_flight - 1)


@dataclass
class EndpointStats:
    url: str
    state: str  # "up" | "benched" | "probation"
    requests: int  # attempts sent to this endpoint
    successes: int
    failures: int  # attempts that failed for a reason that says the endpoint is unwell
    rate_limited: int
    times_benched: int
    limit: int
    max_limit: int
    in_flight: int
    peak_in_flight: int
    last_error: str | None


class Endpoint:
    def __init__(self, url: str, limit: int, grow_after: int) -> None:
        self.url = url
        self.limiter = EndpointLimiter(limit, grow_after=grow_after)
        self.requests = 0
        self.successes = 0
        self.failures = 0
        self.rate_limited = 0
        self.consecutive_failures = 0
        self.benched_until = 0.0
        self.bench_level = 0
        self.times_benched = 0
        self.on_probation = False
        self.probe_in_flight = False
        self.last_error: str | None = None

    def benched(self, now: float) -> bool:
        return self.benched_until > now

    def capacity(self) -> int:
        """Slots usable now: one probe at a time while on probation."""
        if self.on_probation:
            return 0 if self.probe_in_flight else 1
        return self.limiter.limit

    def load(self) -> float:
        return self.limiter.in_flight / max(1, self.limiter.limit)

    def state(self, now: float) -> str:
        if self.benched(now):
            return "benched"
        return "probation" if self.on_probation else "up"

    def stats(self, now: float) -> EndpointStats:
        return EndpointStats(
            url=self.url,
            state=self.state(now),
            requests=self.requests,
            successes=self.successes,
            failures=self.failures,
            rate_limited=self.rate_limited,
            times_benched=self.times_benched,
            last_error=self.last_error,
            **self.limiter.gauges(),
        )


@dataclass(frozen=True)
class _Lease:
    endpoint: Endpoint
    slot: Slot
    probe: bool


class MultiEndpointBackend(OpenAICompatBackend):
    kind = "openai"

    def __init__(
        self, model: str, *, base_urls: list[str], api_key: str | None, options: BackendOptions
    ) -> None:
        urls = [url.rstrip("/") for url in base_urls]
        # The cache key names the set of servers, whatever order they were listed in.
        super().__init__(model, base_url=",".join(sorted(urls)), api_key=api_key, options=options)
        per_endpoint = options.endpoint_concurrency or max(1, math.ceil(options.concurrency / len(urls)))
        self.endpoints = [Endpoint(url, per_endpoint, options.grow_after) for url in urls]
        self.failovers = 0
        self._peak_total = 0
        self._cond: asyncio.Condition | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None

    # -- clients and loops ---------------------------------------------------------------------

    def _new_client(self) -> httpx2.AsyncClient:
        total = sum(endpoint.limiter.max_limit for endpoint in self.endpoints)
        return httpx2.AsyncClient(
            headers=self._headers,
            timeout=httpx2.Timeout(self.options.timeout_s),
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=total),
        )

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._pool_loop is not loop:  # see RemoteBackend._client: state of a dead loop is dropped
            self._pool_loop = loop
            self._cond = asyncio.Condition()
            for endpoint in self.endpoints:
                endpoint.limiter.rebind()
                endpoint.probe_in_flight = False
        return super()._client()

    # -- choosing an endpoint ------------------------------------------------------------------

    def _pick(self, tried: set[str], now: float) -> Endpoint | None:
        healthy = [e for e in self.endpoints if not e.benched(now)]
        untried = [e for e in healthy if e.url not in tried]
        pool = untried or healthy
        free = [e for e in pool if e.limiter.in_flight < e.capacity()]
        if not free:
            return None
        # A benched endpoint whose time is up gets the next request as its probe, even when the
        # others have room: otherwise, under light load, a recovered node would never come back.
        return min(free, key=lambda e: (not e.on_probation, e.load(), e.requests))

    def _next_wakeup(self, now: float) -> float | None:
        benched = [e.benched_until - now for e in self.endpoints if e.benched(now)]
        return max(0.001, min(benched)) if benched else None

    async def _acquire(self, tried: set[str]) -> _Lease:
        assert self._cond is not None
        async with self._cond:
            while True:
                now = time.monotonic()
                endpoint = self._pick(tried, now)
                if endpoint is not None:
                    probe = endpoint.on_probation
                    slot = endpoint.limiter.try_take(endpoint.capacity() if not probe else 1)
                    assert slot is not None
                    endpoint.probe_in_flight = endpoint.probe_in_flight or probe
                    self._peak_total = max(self._peak_total, sum(e.limiter.in_flight for e in self.endpoints))
                    return _Lease(endpoint, slot, probe)
                timeout = self._next_wakeup(now)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._cond.wait(), timeout)

    async def _release(
        self, lease: _Lease, *, success: bool = False, failure: AttemptFailure | None = None
    ) -> None:
        """Give the slot back and learn from the outcome (neither success nor failure: learn nothing)."""
        assert self._cond is not None
        async with self._cond:
            self._give_back(lease)
            endpoint = lease.endpoint
            if success:
                self._on_success(endpoint, lease)
            elif failure is not None and failure.rate_limited:
                endpoint.rate_limited += 1
                endpoint.limiter.on_overload(lease.slot)
            elif failure is not None and failure.category in HEALTH_FAILURES:
                self._on_failure(endpoint, lease, failure, time.monotonic())
            self._cond.notify_all()

    def _give_back(self, lease: _Lease) -> None:
        lease.endpoint.limiter.give_back()
        if lease.probe:
            lease.endpoint.probe_in_flight = False

    async def _notify(self) -> None:
        assert self._cond is not None
        async with self._cond:
            self._cond.notify_all()

    def _on_success(self, endpoint: Endpoint, lease: _Lease) -> None:
        endpoint.successes += 1
        endpoint.limiter.on_success()
        if lease.probe:
            endpoint.on_probation = False
            endpoint.bench_level = 0
        if not endpoint.on_probation:
            endpoint.consecutive_failures = 0

    def _on_failure(self, endpoint: Endpoint, lease: _Lease, failure: AttemptFailure, now: float) -> None:
        endpoint.failures += 1
        endpoint.last_error = failure.message
        if lease.probe:
            self._bench(endpoint, now)
        elif endpoint.on_probation:
            return  # in flight before the bench: already accounted for
        else:
            endpoint.consecutive_failures += 1
            if endpoint.consecutive_failures >= self.options.endpoint_failures_to_cooldown:
                self._bench(endpoint, now)

    def _bench(self, endpoint: Endpoint, now: float) -> None:
        cooldown = self.options.endpoint_cooldown_s * 2 ** min(endpoint.bench_level, MAX_BENCH_DOUBLINGS)
        endpoint.benched_until = now + cooldown
        endpoint.bench_level += 1
        endpoint.times_benched += 1
        endpoint.on_probation = True
        endpoint.consecutive_failures = 0

    def _has_alternative(self, tried: set[str]) -> bool:
        now = time.monotonic()
        return any(not e.benched(now) and e.url not in tried for e in self.endpoints)

    # -- the retry loop, per attempt on a chosen endpoint --------------------------------------

    async def _send_with_retries(self, request: GenerateRequest) -> GenerateResponse:
        self._client()  # bind to this event loop before taking a slot
        payload = self._prepare(request)
        attempt = 0
        tried: set[str] = set()
        while True:
            lease = await self._acquire(tried)
            endpoint = lease.endpoint
            self._counters.requests += 1
            endpoint.requests += 1
            started = time.monotonic()
            try:
                response = await self._post_chat(
                    f"{endpoint.url}{self.api_path}", payload, endpoint=endpoint.url
                )
            except AttemptFailure as failure:
                error = failure
                await self._release(lease, failure=failure)
            except Exception as unexpected:
                await self._release(lease)
                self._counters.failures += 1
                raise BackendError(
                    f"{self.name}: unexpected {type(unexpected).__name__} from {endpoint.url}: {unexpected}",
                    kind=ErrorKind.OTHER,
                ) from unexpected
            except BaseException:  # cancelled: hand the slot back without waiting for the lock
                self._give_back(lease)
                asyncio.get_running_loop().create_task(self._notify())
                raise
            else:
                await self._release(lease, success=True)
                self._counters.successes += 1
                return response.model_copy(update={"latency_s": time.monotonic() - started})
            self._count(error)
            tried.add(endpoint.url)
            if not error.retryable or attempt >= self.options.max_retries:
                self._counters.failures += 1
                tries = attempt + 1
                raise BackendError(
                    f"{self.name}: {error.message} (after {tries} attempt{'s' if tries > 1 else ''}; "
                    f"last at {endpoint.url})",
                    kind=error.kind,
                    status=error.status,
                    sent=error.sent,
                    unreachable=error.unreachable,
                )
            attempt += 1
            self._counters.retries += 1
            if self._has_alternative(tried):
                self.failovers += 1  # another endpoint is ready: no reason to wait
                continue
            await asyncio.sleep(self._delay_before_retry(error, attempt - 1))

    # -- reporting -----------------------------------------------------------------------------

    def endpoint_stats(self) -> list[EndpointStats]:
        now = time.monotonic()
        return [endpoint.stats(now) for endpoint in self.endpoints]

    def stats(self) -> BackendStats:
        snapshot = BackendStats(**self._counters.snapshot())
        snapshot.limit = sum(e.limiter.limit for e in self.endpoints)
        snapshot.max_limit = sum(e.limiter.max_limit for e in self.endpoints)
        snapshot.in_flight = sum(e.limiter.in_flight for e in self.endpoints)
        snapshot.peak_in_flight = self._peak_total
        return snapshot

    def _describe_extra(self) -> dict[str, Any]:
        options = self.options
        return {
            **super()._describe_extra(),
            "base_urls": [endpoint.url for endpoint in self.endpoints],
            "endpoint_concurrency": self.endpoints[0].limiter.max_limit,
            "endpoint_failures_to_cooldown": options.endpoint_failures_to_cooldown,
            "endpoint_cooldown_s": options.endpoint_cooldown_s,
            "failovers": self.failovers,
            "endpoints": [asdict(stats) for stats in self.endpoint_stats()],
        }
