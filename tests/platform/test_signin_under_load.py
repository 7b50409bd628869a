"""Strangers cannot stall reviewers: the sign-in throttle is atomic (forty simultaneous guesses, five
checked), and password hashes run outside every transaction, one at a time, while saves go on.
(How much saves slow down under a flood is measured in benchmarks/platform_flood.py.)"""

from __future__ import annotations

import threading
from collections import Counter

import httpx
from platform_env import Env, LiveServer, password_of
from platform_http import Browserless, csrf_from
from sqlalchemy import func, select

from expvid.platform import create_app
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.models import LoginAttempt


def _attempt(base_url: str, username: str, password: str, client_ip: str, barrier: threading.Barrier,
             results: list[int]) -> None:  # fmt: skip
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=120) as client:
        token = csrf_from(client.get("/login").text)
        barrier.wait()
        response = client.post(
            "/login", data={"username": username, "password": password, "csrf_token": token},
            headers={"X-Forwarded-For": client_ip},
        )  # fmt: skip
        results.append(response.status_code)


def test_forty_simultaneous_wrong_passwords_get_five_checks(env: Env) -> None:
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For"})
    with LiveServer(create_app(settings, database=env.database)) as live:
        barrier = threading.Barrier(40)
        results: list[int] = []
        threads = [
            threading.Thread(
                target=_attempt, args=(live.url, "alice", "guess-number-x", "203.0.113.9", barrier, results)
            )
            for _ in range(40)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert Counter(results) == {401: 5, 429: 35}  # the policy: five free failures per (account, client)
        signed_in = httpx.Client(base_url=live.url, follow_redirects=False)
        try:  # the owner, from her own computer, is not slowed down
            token = csrf_from(signed_in.get("/login").text)
            response = signed_in.post("/login", data={"username": "alice", "password": password_of("alice"),
                                                      "csrf_token": token}, headers={"X-Forwarded-For": "198.51.100.7"})  # fmt: skip
            assert response.status_code == 303
        finally:
            signed_in.close()
    with env.database.read() as db:
        failures = db.scalar(
            select(func.count()).where(LoginAttempt.username == "alice", LoginAttempt.success.is_(False))
        )
    assert failures == 5


def test_saves_go_on_while_passwords_are_hashed(env: Env) -> None:
    """A hash that takes about a second, four wrong sign-ins at once: a reviewer's save is answered
    while they are still being hashed (no transaction waits for argon2), at most two hashes at a time
    (the thread for clean attempts and the shared slot)."""
    with LiveServer(create_app(env.settings, database=env.database)) as fast:
        alice = Browserless(fast.url, "alice", password_of("alice"))  # signed in before the flood
    slow_policy = PasswordPolicy(time_cost=10, memory_kib=65536, parallelism=1, hash_share=1.0)
    settings = env.settings.model_copy(update={"passwords": slow_policy, "proxy_header": "X-Forwarded-For"})
    app = create_app(settings, database=env.database)
    pool = app.state.hashes
    with LiveServer(app) as live:
        alice.client.base_url = httpx.URL(live.url)
        barrier = threading.Barrier(4)
        results: list[int] = []
        threads = [
            threading.Thread(
                target=_attempt,
                args=(live.url, "mallory", "guess-number-x", f"192.0.2.{i}", barrier, results),
            )
            for i in range(4)
        ]  # an unknown account: checked against the dummy hash, made with the slow policy
        for thread in threads:
            thread.start()
        try:
            while pool.running == 0 and any(t.is_alive() for t in threads):
                threading.Event().wait(0.01)
            assert 1 <= pool.running <= 2
            response = alice.decide(env.item_id("tools/0"), "approve", "the dish is visible")
            assert response.status_code == 200
            assert pool.pending >= 1 and any(t.is_alive() for t in threads)  # sign-ins still hashing
        finally:
            for thread in threads:
                thread.join()
            alice.close()
        assert results == [401] * 4 and pool.peak_running <= 2 and pool.done >= 4


def test_colleagues_signing_in_at_once_from_one_office_are_not_throttled(env: Env) -> None:
    """Five accounts, one address (a lab behind NAT), all at the same moment: every one gets in
    (an attempt checked later never sees an earlier-recorded one as lying in its future)."""
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For"})
    with LiveServer(create_app(settings, database=env.database)) as live:
        for _ in range(3):
            barrier = threading.Barrier(5)
            results: list[int] = []
            threads = [
                threading.Thread(
                    target=_attempt,
                    args=(live.url, name, password_of(name), "198.51.100.20", barrier, results),
                )
                for name in ("alice", "bob", "carol", "dave", "root")
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert results == [303] * 5
