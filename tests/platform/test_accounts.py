"""Accounts at the service level: password hashing, session expiry, deactivation, throttling windows."""

from __future__ import annotations

from datetime import datetime, timedelta

from platform_env import FAST_PASSWORDS, Env, password_of
from sqlalchemy import select

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.models import User, WebSession, utc_now
from expvid.platform.security.passwords import Passwords
from expvid.platform.security.sessions import lookup_session, start_session
from expvid.platform.security.throttle import check_throttle, record_attempt, throttle_report
from expvid.platform.services.errors import SYSTEM
from expvid.platform.services.users import authenticate, clean_disciplines, set_active


def test_passwords_are_argon2_and_verified() -> None:
    passwords = Passwords(FAST_PASSWORDS)
    stored = passwords.hash("a long passphrase")
    assert stored.startswith("$argon2id$") and "passphrase" not in stored
    assert passwords.verify(stored, "a long passphrase")
    assert not passwords.verify(stored, "a long passphrasE")
    assert not passwords.verify(None, "anything at all")
    assert not passwords.verify("not-a-hash", "anything at all")


def test_sessions_expire_and_die_with_deactivation(env: Env) -> None:
    passwords = Passwords(FAST_PASSWORDS)
    with env.database.write() as db:
        user = authenticate(db, passwords, "alice", password_of("alice"))
        assert user is not None
        assert authenticate(db, passwords, "alice", "wrong") is None
        token, _ = start_session(db, user, hours=1)
    with env.database.read() as db:
        info = lookup_session(db, token)
        assert info is not None and info.username == "alice" and info.csrf_token
        assert lookup_session(db, token, now=utc_now() + timedelta(hours=2)) is None  # expired
        assert lookup_session(db, "made-up-token") is None
        stored = db.scalar(select(WebSession.token_hash))
        assert stored != token and len(stored or "") == 64  # only a digest is stored
    with env.database.write() as db:
        set_active(db, "alice", False, actor=SYSTEM)
    with env.database.read() as db:
        assert lookup_session(db, token) is None
        assert db.scalar(select(User.active).where(User.username == "alice")) is False
    with env.database.write() as db:
        assert authenticate(db, passwords, "alice", password_of("alice")) is None


def test_throttle_delays_grow_per_account_and_client_and_never_lock_out(env: Env) -> None:
    policy = ThrottlePolicy(
        window_seconds=3600, free_failures_per_pair=3, free_failures_per_client=6,
        base_delay_seconds=2, max_delay_seconds=60,
    )  # fmt: skip
    t0 = utc_now()

    def at(seconds: float) -> datetime:
        return t0 + timedelta(seconds=seconds)

    with env.database.write() as db:
        for i in range(3):
            record_attempt(db, username="bob", ip="10.0.0.1", success=False, now=at(i * 0.1))
        # Three free failures used: this client now waits 2 s after its last failure for bob.
        waiting = check_throttle(db, policy, username="bob", ip="10.0.0.1", now=at(0.5))
        assert (waiting.allowed, waiting.retry_after_s, waiting.scope) == (False, 2, "account")
        assert check_throttle(db, policy, username="bob", ip="10.0.0.1", now=at(2.3)).allowed
        # bob himself, from his own computer, is not slowed down at all (no lockout).
        assert check_throttle(db, policy, username="bob", ip="10.0.0.9", now=at(0.5)).allowed
        # Each further failure doubles the wait, up to the cap.
        record_attempt(db, username="bob", ip="10.0.0.1", success=False, now=at(3))
        assert check_throttle(db, policy, username="bob", ip="10.0.0.1", now=at(3)).retry_after_s == 4
        for i in range(10):
            record_attempt(db, username="bob", ip="10.0.0.1", success=False, now=at(10 + i))
        assert check_throttle(db, policy, username="bob", ip="10.0.0.1", now=at(20)).retry_after_s == 60 - 1
        # A success from that client ends its count for bob.
        record_attempt(db, username="bob", ip="10.0.0.1", success=True, now=at(100))
        assert check_throttle(db, policy, username="bob", ip="10.0.0.1", now=at(100.1)).allowed
        # One client spraying passwords over many accounts is slowed down for every account.
        for i, name in enumerate(["u1", "u2", "u3", "u4", "u5", "u6"]):
            record_attempt(db, username=name, ip="10.0.0.7", success=False, now=at(200 + i))
        spray = check_throttle(db, policy, username="carol", ip="10.0.0.7", now=at(205.5))
        assert (spray.allowed, spray.scope) == (False, "client")
        # Failures older than the window no longer count.
        assert check_throttle(db, policy, username="u1", ip="10.0.0.7", now=at(4000)).allowed
        report = throttle_report(db, policy, now=at(205.5))
    bob = next(a for a in report if a.username == "bob")
    assert (bob.exists, bob.failures, bob.clients, bob.delayed) == (True, 14, 1, [])
    assert next(a for a in report if a.username == "u1").exists is False


def test_disciplines_are_cleaned() -> None:
    assert clean_disciplines(["Biology, chemistry", " biology", "", "Neuroscience"]) == [
        "Biology",
        "chemistry",
        "Neuroscience",
    ]
