"""Several OpenAI-compatible endpoints behind one backend: spreading, limits, failover, benching."""

from __future__ import annotations

import asyncio
import time

import pytest

from expvid.fakes.models.server import Reply
from expvid.models import BackendConfigError, BackendError, create_backend
from expvid.models.multi_endpoint import MultiEndpointBackend
from expvid.models.openai_compat import OpenAICompatBackend


def spec(servers) -> str:
    return "openai:m@" + ",".join(server.openai_base_url for server, _ in servers)


def run_many(backend, requests):
    async def go():
        try:
            return await asyncio.gather(*(backend.generate(r) for r in requests), return_exceptions=True)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def assert_each_answer_is_its_own(results, n):
    for index, result in enumerate(results):
        assert not isinstance(result, Exception), result
        assert result.text.endswith(f"answers: question {index}")
    assert len(results) == n


def test_requests_spread_over_endpoints_within_each_endpoints_limit(cluster, ask):
    servers = cluster(3, delay_s=0.03)
    backend = create_backend(spec(servers), concurrency=6)  # 2 per endpoint
    assert isinstance(backend, MultiEndpointBackend)
    results = run_many(backend, [ask(i) for i in range(36)])
    assert_each_answer_is_its_own(results, 36)
    counts = [len(server.requests) for server, _ in servers]
    assert sum(counts) == 36 and min(counts) >= 8  # everyone worked
    assert all(server.max_in_flight <= 2 for server, _ in servers)
    assert max(server.max_in_flight for server, _ in servers) == 2  # and the limit was used
    stats = backend.stats()
    assert stats.successes == 36 and stats.failures == 0 and stats.max_limit == 6
    assert [e.requests for e in backend.endpoint_stats()] == counts


@pytest.mark.parametrize(
    "failure", [Reply.error(503, "node draining"), Reply.dropped()], ids=["503", "dropped"]
)
def test_an_endpoint_failing_mid_run_is_benched_and_its_requests_fail_over(cluster, ask, fast, failure):
    servers = cluster(3, delay_s=0.02)
    failing = servers[2][1]
    failing.failure, failing.fail_after = failure, 4  # node c breaks after 4 answers
    backend = create_backend(
        spec(servers), concurrency=6, endpoint_failures_to_cooldown=2, endpoint_cooldown_s=60, **fast
    )
    results = run_many(backend, [ask(i) for i in range(60)])

    assert_each_answer_is_its_own(results, 60)  # all complete, each with its own answer, once
    assert backend.stats().failures == 0
    a, b, c = backend.endpoint_stats()
    assert c.state == "benched" and c.times_benched == 1
    assert c.successes == 4
    # After breaking, c only saw the attempts that tripped it and those already in flight.
    assert c.requests - c.successes <= 2 + 2
    assert a.requests >= 20 and b.requests >= 20
    assert backend.failovers >= 1
    assert backend.describe()["failovers"] == backend.failovers


def test_a_benched_endpoint_is_probed_and_comes_back(cluster, ask, fast):
    servers = cluster(2, delay_s=0.02)
    flaky = servers[1][1]
    flaky.failure, flaky.fail_after, flaky.recover_after_failures = Reply.error(500), 0, 2
    backend = create_backend(
        spec(servers), concurrency=2, endpoint_failures_to_cooldown=2, endpoint_cooldown_s=0.1, **fast
    )

    async def go():
        try:
            first = await asyncio.gather(*(backend.generate(ask(i)) for i in range(10)))
            await asyncio.sleep(0.15)  # the bench ends; the next request to b is a probe
            second = await asyncio.gather(*(backend.generate(ask(i)) for i in range(10, 30)))
            return first + second
        finally:
            await backend.aclose()

    results = asyncio.run(go())
    assert_each_answer_is_its_own(results, 30)
    _, b = backend.endpoint_stats()
    assert b.times_benched == 1 and b.state == "up"
    assert b.successes >= 5  # back in rotation after a successful probe


def test_a_failed_probe_benches_for_twice_as_long(cluster, ask, fast):
    servers = cluster(2, delay_s=0.0)
    dead = servers[1][1]
    dead.failure, dead.fail_after = Reply.error(500), 0
    backend = create_backend(
        spec(servers), concurrency=2, endpoint_failures_to_cooldown=1, endpoint_cooldown_s=0.2, **fast
    )

    async def go():
        try:
            await backend.generate(ask(0))
            await backend.generate(ask(1))
            first_bench = backend.endpoints[1].benched_until - time.monotonic()
            await asyncio.sleep(first_bench + 0.02)
            for index in range(2, 6):  # one of these is the probe, which fails
                await backend.generate(ask(index))
            return first_bench, backend.endpoints[1].benched_until - time.monotonic()
        finally:
            await backend.aclose()

    first_bench, second_bench = asyncio.run(go())
    assert 0 < first_bench <= 0.2
    assert second_bench > 0.25  # 0.4 s, minus the few milliseconds since
    assert backend.endpoint_stats()[1].times_benched == 2


def test_when_every_endpoint_fails_the_request_fails_after_its_retries(cluster, ask, fast):
    servers = cluster(2)
    for _, node in servers:
        node.failure, node.fail_after = Reply.error(502, "bad gateway"), 0
    backend = create_backend(spec(servers), max_retries=3, endpoint_cooldown_s=0.01, **fast)
    (result,) = run_many(backend, [ask(0)])
    assert isinstance(result, BackendError)
    assert "HTTP 502" in str(result) and "after 4 attempts" in str(result)
    assert sum(len(server.requests) for server, _ in servers) == 4  # retries are bounded overall


def test_a_request_error_is_final_and_does_not_mark_the_endpoint(cluster, ask, fast):
    servers = cluster(2)
    for _, node in servers:
        node.failure, node.fail_after = Reply.error(400, "image too large"), 0
    backend = create_backend(spec(servers), endpoint_failures_to_cooldown=1, **fast)
    (result,) = run_many(backend, [ask(0)])
    assert isinstance(result, BackendError) and result.status == 400
    assert sum(len(server.requests) for server, _ in servers) == 1
    assert all(e.state == "up" and e.failures == 0 for e in backend.endpoint_stats())


def test_a_rate_limited_endpoint_slows_down_alone(cluster, ask, fast):
    servers = cluster(2)
    limited = servers[0][1]
    limited.failure, limited.fail_after, limited.recover_after_failures = Reply.rate_limited(0), 0, 1
    backend = create_backend(spec(servers), concurrency=8, **fast)
    results = run_many(backend, [ask(i) for i in range(8)])
    assert_each_answer_is_its_own(results, 8)
    a, b = backend.endpoint_stats()
    assert a.rate_limited == 1 and a.limit < a.max_limit
    assert b.limit == b.max_limit
    assert a.state == "up"  # 429 is about load, not health


def test_describe_lists_every_endpoint_and_the_cache_key_ignores_their_order(cluster, ask):
    servers = cluster(2)
    urls = [server.openai_base_url for server, _ in servers]
    forward = create_backend("openai:m@" + ",".join(urls))
    backward = create_backend("openai:m", base_urls=list(reversed(urls)))
    described = forward.describe()
    assert described["base_urls"] == urls
    assert [e["url"] for e in described["endpoints"]] == urls
    assert described["endpoint_concurrency"] == 4  # default concurrency 8 shared by 2
    assert forward.request_hash(ask(0)) == backward.request_hash(ask(0))


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("openai:m@http://a:1/v1,http://a:1/v1/", {}, "listed twice"),
        ("openai:m@http://a:1/v1,ftp://b:2", {}, "not an http"),
        ("openai:m@http://a:1/v1,http://b:2/v1", {"base_urls": ["http://c:3/v1"]}, "option base_urls"),
        (
            "openai:m",
            {"base_urls": ["http://a:1/v1", "http://b:2/v1"], "base_url": "http://c:3/v1"},
            "not both",
        ),
    ],
)
def test_url_lists_are_validated(spec, options, message):
    with pytest.raises(BackendConfigError, match=message):
        create_backend(spec, **options)


def test_one_url_in_base_urls_is_a_plain_openai_backend():
    backend = create_backend("openai:m", base_urls=["http://a:1/v1"])
    assert isinstance(backend, OpenAICompatBackend) and not isinstance(backend, MultiEndpointBackend)
    assert backend.describe()["base_url"] == "http://a:1/v1"
