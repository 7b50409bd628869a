"""Colleagues signing in at once from one office address take the newcomers' lane, not the strangers'.

An attempt is recorded as a failure before its password is hashed (so that concurrency buys no free
guesses); counted against its *source* for the lane too, the first colleague's attempt sent the other
four to `other`, where a flood's attempts wait. Attempts this process is still checking do not count
against their source (`SignInGate.unsettled`); they still count against their account and for the
throttle. Both backends (the `env` fixture)."""

from __future__ import annotations

import threading

from platform_env import Env, LiveServer, password_of
from sqlalchemy import select
from test_signin_fairness import SLOW, _slow_password
from test_signin_under_load import _attempt

from expvid.platform import create_app
from expvid.platform.db.models import LoginAttempt
from expvid.platform.security.hashing import CLEAN, OTHER, HashPool
from expvid.platform.security.throttle import classify, reserve_attempt

OFFICE = "198.51.100.20"
COLLEAGUES = ("alice", "bob", "carol", "dave", "root")


def test_an_attempt_still_being_checked_does_not_make_its_source_a_strangers(env: Env) -> None:
    policy = env.settings.throttle
    with env.database.write() as db:
        _, alice_attempt, _ = reserve_attempt(db, policy, username="alice", ip=OFFICE)
    assert alice_attempt is not None
    with env.database.read() as db:
        # Recorded as a failure until its hash ends: without knowing it is unsettled, bob is `other`.
        assert classify(db, policy, username="bob", ip=OFFICE) == OTHER
        assert classify(db, policy, username="bob", ip=OFFICE, unsettled={alice_attempt}) == CLEAN
        # Against the account it still counts: alice tried from two places at once is a guess.
        assert classify(db, policy, username="alice", ip="203.0.113.50", unsettled={alice_attempt}) == OTHER
        # Unsettled ids of another source change nothing here.
        assert classify(db, policy, username="bob", ip=OFFICE, unsettled={alice_attempt + 1000}) == OTHER


def test_five_colleagues_at_once_from_one_office_are_all_hashed_in_the_clean_lane(env: Env) -> None:
    for name in COLLEAGUES:
        _slow_password(env, name)
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For", "passwords": SLOW})
    app = create_app(settings, database=env.database)
    pool: HashPool = app.state.hashes
    with LiveServer(app) as live:
        barrier = threading.Barrier(len(COLLEAGUES))
        results: list[int] = []
        threads = [
            threading.Thread(
                target=_attempt, args=(live.url, name, password_of(name), OFFICE, barrier, results)
            )
            for name in COLLEAGUES
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [303] * len(COLLEAGUES)
        assert pool.done_by_lane[CLEAN] == len(COLLEAGUES) and pool.done_by_lane[OTHER] == 0, (
            pool.done_by_lane
        )
        assert app.state.signin_gate.unsettled.of(OFFICE) == frozenset()  # all settled
    with env.database.read() as db:
        outcomes = db.scalars(select(LoginAttempt.success).where(LoginAttempt.ip == OFFICE)).all()
    assert sorted(outcomes) == [True] * len(COLLEAGUES)
