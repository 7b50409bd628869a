"""Adaptive concurrency: the cap holds at the server, 429 halves it once per burst, successes grow it back."""

from __future__ import annotations

import asyncio
import threading

from expvid.fakes.models.server import Reply
from expvid.models import create_backend
from expvid.models.limiter import AdaptiveLimiter


def test_halves_once_per_epoch_and_grows_back_by_one():
    limiter = AdaptiveLimiter(8, grow_after=3)

    async def scenario() -> list[int]:
        seen = []
        async with limiter.slot() as a, limiter.slot() as b:
            assert limiter.on_overload(a) is True
            assert limiter.on_overload(b) is False  # same burst: already reacted
        seen.append(limiter.limit)
        async with limiter.slot() as c:
            limiter.on_overload(c)  # a new epoch: halves again
        seen.append(limiter.limit)
        for _ in range(3):
            limiter.on_success()
        seen.append(limiter.limit)
        for _ in range(100):
            limiter.on_success()
        seen.append(limiter.limit)
        return seen

    assert asyncio.run(scenario()) == [4, 2, 3, 8]
    assert limiter.decreases == 2


def test_limit_never_drops_below_one():
    limiter = AdaptiveLimiter(2, grow_after=1)

    async def scenario() -> None:
        for _ in range(5):
            async with limiter.slot() as slot:
                limiter.on_overload(slot)

    asyncio.run(scenario())
    assert limiter.limit == 1


def test_slots_never_exceed_the_current_limit():
    limiter = AdaptiveLimiter(5)
    active = 0
    peak = 0

    async def task() -> None:
        nonlocal active, peak
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.005)
            active -= 1

    async def scenario() -> None:
        await asyncio.gather(*(task() for _ in range(40)))
        limiter.limit = 2  # as after two halvings
        await asyncio.gather(*(task() for _ in range(20)))

    asyncio.run(scenario())
    assert peak == 5
    assert limiter.peak_in_flight == 5 and limiter.in_flight == 0


def test_server_never_sees_more_than_concurrency_requests(server, make_request):
    server.reset(Reply.slow("OK", delay_s=0.05))
    backend = create_backend(f"openai:m@{server.openai_base_url}", concurrency=4)

    async def burst() -> None:
        await asyncio.gather(*(backend.generate(make_request(question=f"q{i}")) for i in range(24)))
        await backend.aclose()

    asyncio.run(burst())
    assert len(server.requests) == 24
    assert server.max_in_flight == 4  # the cap is reached (parallel) and never exceeded
    assert backend.stats().peak_in_flight == 4


def test_429_burst_halves_the_limit_once_and_successes_restore_it(server, make_request, fast):
    """Six requests in flight all get 429: the limit goes 6 -> 3 (one signal), not 6 -> 3 -> 1 -> 1..."""
    lock = threading.Lock()
    seen = {"n": 0}

    def first_six_rate_limited(_request) -> Reply:
        with lock:
            seen["n"] += 1
            n = seen["n"]
        if n <= 6:
            return Reply(status=429, headers={"Retry-After": "0.05"}, delay_s=0.05)
        return Reply.slow("OK", delay_s=0.05)

    server.reset(first_six_rate_limited)
    backend = create_backend(f"openai:m@{server.openai_base_url}", concurrency=6, grow_after=100, **fast)

    async def burst() -> None:
        await asyncio.gather(*(backend.generate(make_request(question=f"q{i}")) for i in range(6)))
        await backend.aclose()

    asyncio.run(burst())
    stats = backend.stats()
    assert stats.rate_limited == 6
    assert backend.limiter.decreases == 1
    assert stats.limit == 3
    # After the cut the retries went through at most 3 at a time.
    retries = server.requests[6:]
    assert len(retries) == 6
    assert _max_overlap(retries, duration=0.05) <= 3

    # Recovery: with grow_after=2, each pair of successes adds one slot back, up to the maximum.
    backend.limiter.grow_after = 2

    async def sequential(n: int) -> None:
        for i in range(n):
            await backend.generate(make_request(question=f"again {i}"))
        await backend.aclose()

    asyncio.run(sequential(2))
    assert backend.stats().limit == 4
    asyncio.run(sequential(10))
    assert backend.stats().limit == 6  # capped at concurrency


def _max_overlap(requests, *, duration: float) -> int:
    """Largest number of requests whose [received, received + duration) windows overlap."""
    events = sorted(
        [(r.received_at, 1) for r in requests] + [(r.received_at + duration, -1) for r in requests]
    )
    active = peak = 0
    for _, delta in events:
        active += delta
        peak = max(peak, active)
    return peak
