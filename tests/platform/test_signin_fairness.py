"""Strangers cannot spend the sign-in capacity owners need: lanes, shares per source and account,
nothing recorded for a shed attempt, and no difference between a user name that exists and one that
does not. (How long the owner waits under 8 and 80 flooders is measured in
benchmarks/platform_flood.py.)"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest
from platform_env import Env, LiveServer, password_of
from platform_http import csrf_from
from sqlalchemy import func, select, update

from expvid.platform import create_app
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.models import LoginAttempt, User
from expvid.platform.security.client import client_address, source_key
from expvid.platform.security.hashing import CLEAN, OTHER, TRUSTED, HashingBusy, HashPool
from expvid.platform.security.passwords import Passwords

OWNER_ADDRESS = "198.51.100.7"
#: Slow enough that a few strangers keep the shared slot busy (about 0.1-0.3 s per hash).
SLOW = PasswordPolicy(time_cost=6, memory_kib=32768, parallelism=1, hash_queue=2, hash_share=1.0)


def _login(base_url: str, username: str, password: str, address: str) -> tuple[int, float, str]:
    started = time.perf_counter()
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=120) as client:
        token = csrf_from(client.get("/login").text)
        response = client.post("/login", data={"username": username, "password": password, "csrf_token": token},
                               headers={"X-Forwarded-For": address})  # fmt: skip
    body = re.sub(r'name="csrf_token" value="[^"]*"', "", response.text)  # a fresh token on every page
    return response.status_code, time.perf_counter() - started, body


@contextmanager
def strangers_guessing(base_url: str, account: str, *, clients: int) -> Iterator[Counter[int]]:
    """`clients` threads posting wrong passwords for `account`, each attempt from a new random
    address (no per-client throttle ever applies), until the block ends; yields their answers by status."""
    stop = threading.Event()
    answers: Counter[int] = Counter()

    def stranger(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            address = (
                f"{rng.randrange(1, 224)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            )
            answers[_login(base_url, account, f"guess-{rng.random()}", address)[0]] += 1

    threads = [threading.Thread(target=stranger, args=(seed,)) for seed in range(clients)]
    for thread in threads:
        thread.start()
    try:
        yield answers
    finally:
        stop.set()
        for thread in threads:
            thread.join()


def wait_until(condition: Callable[[], bool], *, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def _slow_password(env: Env, username: str) -> None:
    """Store `username`'s password at the slow cost (the test users' are nearly free to check)."""
    with env.database.write() as db:
        db.execute(
            update(User)
            .where(User.username == username)
            .values(password_hash=Passwords(SLOW).hash(password_of(username)))
        )


def test_the_owner_gets_in_while_strangers_fill_the_queue(env: Env) -> None:
    _slow_password(env, "alice")
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For", "passwords": SLOW})
    app = create_app(settings, database=env.database)
    pool: HashPool = app.state.hashes
    with LiveServer(app) as live:
        assert _login(live.url, "alice", password_of("alice"), OWNER_ADDRESS)[0] == 303  # her usual computer
        with strangers_guessing(live.url, "alice", clients=12) as answers:
            wait_until(lambda: answers[503] >= 3)  # the strangers' lane is full
            assert answers[503] >= 3, answers
            status, seconds, _ = _login(live.url, "alice", password_of("alice"), OWNER_ADDRESS)
            busy_meanwhile = pool.pending_in(OTHER)
    assert status == 303, answers
    # Her first sign-in from there was clean; this one, in the flood, trusted.
    assert busy_meanwhile >= 1 and pool.done_by_lane[TRUSTED] == 1 and pool.shed_by_lane[OTHER] >= 3
    assert pool.peak_running <= 3  # owners', clean and shared threads: memory stays bounded
    # A shed attempt is not recorded: it never counts as a failure against anyone.
    with env.database.read() as db:
        failures = db.scalar(
            select(func.count()).where(LoginAttempt.username == "alice", LoginAttempt.success.is_(False))
        )
        own = db.scalar(select(func.count()).where(LoginAttempt.ip == OWNER_ADDRESS))
    assert failures == answers[401] and own == 2
    assert seconds < 30  # generous: a busy 2-core machine; the benchmark measures the real figure


def test_a_user_name_that_does_not_exist_costs_what_one_that_does_costs(env: Env) -> None:
    """Same lane, same hash cost (a dummy at the current cost), same answer, similar time."""
    _slow_password(env, "bob")
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For", "passwords": SLOW})
    app = create_app(settings, database=env.database)
    pool: HashPool = app.state.hashes
    samples: dict[str, list[float]] = {"bob": [], "nobody-here": []}
    bodies: dict[str, set[str]] = {"bob": set(), "nobody-here": set()}
    with LiveServer(app) as live:
        for round_ in range(4):
            for index, name in enumerate(samples):  # interleaved, each from an address of its own
                before = Counter(pool.done_by_lane)
                status, seconds, body = _login(
                    live.url, name, "not the password", f"192.0.2.{round_ * 2 + index + 1}"
                )
                assert status == 401
                lane = next(iter((Counter(pool.done_by_lane) - before).elements()))
                assert lane == (CLEAN if round_ == 0 else OTHER), (name, round_, lane)
                samples[name].append(seconds)
                bodies[name].add(body.replace(name, "NAME"))
    assert bodies["bob"] == bodies["nobody-here"]
    dummy = Passwords(SLOW)._dummy
    with env.database.read() as db:
        stored = db.scalar(select(User.password_hash).where(User.username == "bob"))
    assert stored is not None and stored.split("$")[3] == dummy.split("$")[3]  # m, t, p: one cost
    known, unknown = sorted(samples["bob"])[1], sorted(samples["nobody-here"])[1]
    assert 0.5 < unknown / known < 2.0, samples


def test_each_source_and_account_gets_a_bounded_share_of_a_lane() -> None:
    pool = HashPool(Passwords(PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)), queue=16,
                    per_source=3, per_account=5)  # fmt: skip
    try:
        # While the lane is less than half full, anyone may add (an office signing in at nine).
        tickets = [pool.admit(OTHER, "10.0.0.1", f"user{i}") for i in range(8)]
        with pytest.raises(HashingBusy):  # half full: one source holds more than its share
            pool.admit(OTHER, "10.0.0.1", "user99")
        tickets += [pool.admit(OTHER, f"10.0.1.{i}", "alice") for i in range(5)]
        with pytest.raises(HashingBusy):  # ...and so does one account, from anywhere
            pool.admit(OTHER, "10.0.2.1", "alice")
        tickets.append(pool.admit(OTHER, "10.0.3.1", "carol"))  # others still get in
        # The other lanes are apart: the owners' lane is empty whatever strangers hold.
        trusted = pool.admit(TRUSTED, "198.51.100.7", "alice")
        for ticket in [*tickets, trusted]:
            pool.cancel(ticket)
        assert pool.pending == 0
    finally:
        pool.close()


def test_sources_are_counted_per_ipv6_network_and_mapped_ipv4_is_ipv4() -> None:
    assert source_key("2001:db8:1:2::1") == source_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert source_key("2001:db8:1:3::1") != source_key("2001:db8:1:2::1")
    assert source_key("::ffff:203.0.113.7") == "203.0.113.7" == source_key("203.0.113.7")
    # A proxy on a dual-stack socket is trusted as itself, and reports its client as IPv4.
    assert client_address("::ffff:127.0.0.1", "::ffff:198.51.100.7", header="X-Forwarded-For",
                          trusted_proxies=["127.0.0.1"]) == "198.51.100.7"  # fmt: skip
