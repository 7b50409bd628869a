"""Accounts at the service level: password hashing, session expiry, deactivation, throttling windows."""

from __future__ import annotations

from datetime import timedelta

from platform_env import FAST_PASSWORDS, Env, password_of
from sqlalchemy import select, update

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.models import LoginAttempt, User, WebSession, utc_now
from expvid.platform.security.passwords import Passwords
from expvid.platform.security.sessions import lookup_session, start_session
from expvid.platform.security.throttle import check_throttle, record_attempt
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


def test_throttle_counts_failures_in_a_window(env: Env) -> None:
    policy = ThrottlePolicy(window_seconds=60, max_failures_per_user=3, max_failures_per_ip=5)
    with env.database.write() as db:
        for _ in range(3):
            record_attempt(db, username="bob", ip="10.0.0.1", success=False)
        verdict = check_throttle(db, policy, username="bob", ip="10.0.0.9")
        assert not verdict.allowed and 0 < verdict.retry_after_s <= 61
        assert check_throttle(db, policy, username="carol", ip="10.0.0.1").allowed
        for name in ("u1", "u2"):
            record_attempt(db, username=name, ip="10.0.0.1", success=False)
        assert not check_throttle(db, policy, username="carol", ip="10.0.0.1").allowed  # per address
        # Failures older than the window no longer count.
        db.execute(update(LoginAttempt).values(at=utc_now() - timedelta(seconds=120)))
        assert check_throttle(db, policy, username="bob", ip="10.0.0.1").allowed


def test_disciplines_are_cleaned() -> None:
    assert clean_disciplines(["Biology, chemistry", " biology", "", "Neuroscience"]) == [
        "Biology",
        "chemistry",
        "Neuroscience",
    ]
