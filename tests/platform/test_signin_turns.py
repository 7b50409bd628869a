"""What strangers can spend of the shared hashing slot: attempts in a lane take turns per account,
and after a stranger's hash the slot rests for longer than after a newcomer's (`STRANGER_SHARE`).

Both are pool-level rules, so they are tested on the pool itself with work of known length; the
benchmark (benchmarks/platform_flood.py) measures what they are worth to saves under a flood."""

from __future__ import annotations

import threading
import time

from expvid.platform.config import PasswordPolicy
from expvid.platform.security.hashing import OTHER, STRANGER_SHARE, HashPool
from expvid.platform.security.passwords import Passwords

CHEAP = Passwords(PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1))


def test_a_colleague_in_the_other_lane_waits_one_turn_per_account_not_for_the_flood() -> None:
    """Twelve strangers' attempts at alice and four at bob wait; carol (one mistyped password, so in
    `other` too) comes after them. First come, she would be 17th; in turns she is third."""
    pool = HashPool(CHEAP, share=1.0)
    release = threading.Event()
    order: list[str] = []
    try:
        blocker = pool._enqueue(pool.admit(OTHER, "198.51.100.1", "mallory"), release.wait)
        while pool.running < 1:
            time.sleep(0.005)
        jobs = [
            pool._enqueue(pool.admit(OTHER, f"203.0.113.{i}", account), lambda a=account: order.append(a))
            for i, account in enumerate(["alice"] * 12 + ["bob"] * 4 + ["carol"])
        ]
        release.set()
        blocker.result(timeout=30)
        for job in jobs:
            job.result(timeout=30)
    finally:
        pool.close()
    assert len(order) == 17
    assert order.index("carol") == 2, order
    # Within an account, first come first served; every account keeps its turn until it is done.
    assert order[:6] == ["alice", "bob", "carol", "alice", "bob", "alice"], order


def test_after_a_strangers_hash_the_shared_slot_rests_longer_than_its_share() -> None:
    """Share 0.5: after 0.2 s of a stranger's work the slot rests 0.2 * (1 / (0.5 * 0.2) - 1) = 1.8 s
    before it takes the next stranger's attempt (at share 0.5 alone it would rest 0.2 s)."""
    assert STRANGER_SHARE == 0.2
    pool = HashPool(CHEAP, share=0.5)
    times: dict[str, float] = {}

    def first() -> None:
        time.sleep(0.2)
        times["first_ended"] = time.monotonic()

    def second() -> None:
        times["second_started"] = time.monotonic()

    try:
        one = pool._enqueue(pool.admit(OTHER, "192.0.2.1", "alice"), first)
        two = pool._enqueue(pool.admit(OTHER, "192.0.2.2", "bob"), second)
        one.result(timeout=30)
        two.result(timeout=30)
    finally:
        pool.close()
    rest = times["second_started"] - times["first_ended"]
    assert 1.6 <= rest < 10.0, rest
