"""Retry policy end to end: Retry-After honoured (measured), 5xx backoff, exhaustion, timeouts, drops."""

from __future__ import annotations

import asyncio
import gc
import random
import socket
import time
from email.utils import formatdate

import pytest

from expvid.fakes.models.server import Reply, script
from expvid.models import BackendError, create_backend
from expvid.models.options import BackendOptions
from expvid.models.remote import RemoteBackend
from expvid.models.retry import backoff_delay, failure_for_status, retry_after_seconds
from expvid.schema import ErrorKind


def _gap(server) -> float:
    first, second = server.requests[:2]
    return second.received_at - first.received_at


def test_429_with_retry_after_seconds_waits_that_long(call, server, make_request, fast):
    server.reset(script(Reply.rate_limited(1), "\\boxed{A}"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)

    started = time.monotonic()
    response = call(backend, make_request())
    elapsed = time.monotonic() - started

    assert response.text == "\\boxed{A}"
    assert 0.95 <= _gap(server) < 2.0
    assert elapsed >= 0.95
    stats = backend.stats()
    assert stats.rate_limited == 1 and stats.retries == 1 and stats.requests == 2


def test_429_with_retry_after_http_date_waits_until_then(call, server, make_request, fast):
    # HTTP-dates have whole-second resolution: "now + 2 s" truncates to a wait of 1 to 2 s.
    server.reset(script(Reply.rate_limited(formatdate(time.time() + 2, usegmt=True)), "OK"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)

    assert call(backend, make_request()).text == "OK"
    assert 0.9 <= _gap(server) < 2.5


def test_retry_after_ms_and_the_cap_on_long_waits(call, server, make_request, fast):
    server.reset(script(Reply.rate_limited(150, header="retry-after-ms"), Reply.rate_limited(3600), "OK"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", max_retry_after_s=0.2, **fast)

    started = time.monotonic()
    assert call(backend, make_request()).text == "OK"
    elapsed = time.monotonic() - started

    first, second, third = server.requests
    assert second.received_at - first.received_at >= 0.14
    assert 0.19 <= third.received_at - second.received_at < 1.0  # an hour asked, the cap obeyed
    assert elapsed < 2.0


def test_5xx_are_retried_then_succeed(call, server, make_request, fast):
    server.reset(script(Reply.error(500), Reply.error(502), Reply.error(503), "\\boxed{D}"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)

    response = call(backend, make_request())

    assert response.text == "\\boxed{D}"
    assert len(server.requests) == 4
    stats = backend.stats()
    assert stats.server_errors == 3 and stats.retries == 3 and stats.failures == 0
    assert stats.limit == stats.max_limit  # 5xx do not shrink the limiter; only 429 does


def test_retries_exhausted_raise_backend_error_with_status(call, server, make_request, fast):
    server.reset(Reply.error(500, "GPU fell off the bus"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", max_retries=2, **fast)

    with pytest.raises(BackendError) as caught:
        call(backend, make_request())

    error = caught.value
    assert error.status == 500
    assert error.kind == ErrorKind.REQUEST
    assert "GPU fell off the bus" in str(error) and "after 3 attempts" in str(error)
    assert len(server.requests) == 3
    assert backend.stats().failures == 1


def test_429_exhausted_keeps_its_status(call, server, make_request, fast):
    server.reset(Reply.rate_limited(0))
    backend = create_backend(f"openai:m@{server.openai_base_url}", max_retries=1, **fast)
    with pytest.raises(BackendError) as caught:
        call(backend, make_request())
    assert caught.value.status == 429
    assert len(server.requests) == 2


def test_timeouts_become_backend_error_of_kind_timeout(call, server, make_request, fast):
    server.reset(Reply.slow("too late", delay_s=5.0))
    backend = create_backend(f"openai:m@{server.openai_base_url}", timeout_s=0.2, max_retries=1, **fast)

    started = time.monotonic()
    with pytest.raises(BackendError) as caught:
        call(backend, make_request())
    elapsed = time.monotonic() - started

    assert caught.value.kind == ErrorKind.TIMEOUT
    assert caught.value.status is None
    assert 0.4 <= elapsed < 2.0
    assert len(server.requests) == 2
    assert backend.stats().timeouts == 2


def test_slow_but_in_time_is_fine(call, server, make_request):
    server.reset(Reply.slow("worth the wait", delay_s=0.2))
    backend = create_backend(f"openai:m@{server.openai_base_url}", timeout_s=5)
    response = call(backend, make_request())
    assert response.text == "worth the wait"
    assert response.latency_s >= 0.2


def test_dropped_connections_are_retried(call, server, make_request, fast):
    server.reset(script(Reply.dropped(), Reply.dropped(), "OK"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)
    assert call(backend, make_request()).text == "OK"
    assert backend.stats().network_errors == 2


def test_connection_refused_is_a_request_error_after_retries(call, make_request, fast):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = create_backend(f"openai:m@http://127.0.0.1:{port}/v1", max_retries=1, **fast)
    with pytest.raises(BackendError, match="cannot reach the server") as caught:
        call(backend, make_request())
    assert caught.value.kind == ErrorKind.REQUEST and caught.value.unreachable  # counted by the breaker
    assert backend.stats().network_errors == 2


def test_retry_after_parsing():
    now = 1_700_000_000.0
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": " 1.5 "}) == 1.5
    assert retry_after_seconds({"Retry-After": formatdate(now + 30, usegmt=True)}, now=now) == 30.0
    assert retry_after_seconds({"Retry-After": formatdate(now - 30, usegmt=True)}, now=now) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({"Retry-After": "-3"}) is None
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert retry_after_seconds({}) is None


def test_status_classification():
    assert failure_for_status(429, {"Retry-After": "3"}, "").retry_after_s == 3.0
    assert failure_for_status(503, {}, "").retryable
    assert failure_for_status(408, {}, "").retryable
    assert not failure_for_status(400, {}, "").retryable
    assert not failure_for_status(401, {}, "").retryable
    assert "context length exceeded" in failure_for_status(400, {}, "context length\n exceeded").message


def test_backoff_is_full_jitter_under_an_exponential_ceiling():
    rng = random.Random(7)
    for attempt in range(8):
        ceiling = min(10.0, 0.5 * 2**attempt)
        delays = [backoff_delay(attempt, base_s=0.5, max_s=10.0, rng=rng) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > 0.7 * ceiling  # spread over the whole range, not a fixed step
        assert min(delays) < 0.3 * ceiling


class _Exploding(RemoteBackend):
    """A backend whose transport raises something no backend maps: stands in for an SDK surprise."""

    kind = "exploding"

    def _new_client(self) -> None:
        return None

    def _prepare(self, request):
        return None

    async def _send_once(self, payload):
        raise KeyError("field the SDK did not expect")


def test_unexpected_exceptions_become_backend_errors_not_crashes(make_request):
    backend = _Exploding("m", base_url=None, options=BackendOptions())
    with pytest.raises(BackendError, match="unexpected KeyError") as caught:
        asyncio.run(backend.generate(make_request()))
    assert caught.value.kind == ErrorKind.OTHER
    assert isinstance(caught.value.__cause__, KeyError)  # the original stays attached for debugging
    assert backend.stats().failures == 1 and backend.stats().in_flight == 0


@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_backend_survives_a_new_event_loop(server, make_request):
    """A caller that runs asyncio.run() twice gets a fresh client, not 'Event loop is closed'."""
    backend = create_backend(f"openai:m@{server.openai_base_url}", concurrency=2)
    assert asyncio.run(backend.generate(make_request(question="first"))).text == "OK"

    async def second_loop() -> str | None:
        try:
            return (await backend.generate(make_request(question="second"))).text
        finally:
            await backend.aclose()

    assert asyncio.run(second_loop()) == "OK"
    assert len(server.requests) == 2
    gc.collect()  # the first loop's abandoned connection is reclaimed here, under this test's filter
