"""Signing in, in three steps so that no transaction is open while a password is hashed.

1. `reserve` (short write transaction): check the throttle and record the attempt as a failure,
   atomically per client address (security/throttle.py); read the account's stored hash;
2. hash: verify the password on the bounded, low-priority hashing pool (security/hashing.py),
   holding no connection and no lock;
3. on success only (short write transaction): turn the attempt into a success, start the session,
   store a re-hash if the costs changed (computed before the transaction).

A wrong password therefore costs the database one small insert, and nothing else waits for the hash.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.models import User
from expvid.platform.security.hashing import HashPool
from expvid.platform.security.sessions import start_session
from expvid.platform.security.throttle import mark_success, reserve_attempt

#: Longer passwords (or user names) fail without being hashed: hashing a megabyte costs real time.
MAX_PASSWORD = 1024


@dataclass(frozen=True)
class SignIn:
    #: "ok", "failed" or "throttled".
    outcome: str
    token: str | None = None
    retry_after_s: int = 0


async def sign_in(
    database: Database,
    pool: HashPool,
    policy: ThrottlePolicy,
    *,
    username: str,
    password: str,
    ip: str,
    session_hours: float,
) -> SignIn:
    """One sign-in attempt; raises `HashingBusy` when too many attempts wait for a hash already."""

    def reserve() -> tuple[bool, int, int | None, int | None, str | None]:
        with database.write() as db:
            verdict, attempt_id = reserve_attempt(db, policy, username=username, ip=ip)
            if attempt_id is None:
                return False, verdict.retry_after_s, None, None, None
            user = db.scalar(select(User).where(User.username == username)) if len(username) <= 64 else None
            if user is None or not user.active:
                return True, 0, attempt_id, None, None
            return True, 0, attempt_id, user.id, user.password_hash

    allowed, retry_after, attempt_id, user_id, stored = await run_in_threadpool(reserve)
    if not allowed or attempt_id is None:
        return SignIn("throttled", retry_after_s=retry_after)
    # An unknown or inactive account is verified against a dummy hash: the answer takes as long.
    ok = len(password) <= MAX_PASSWORD and await pool.verify(stored, password) and user_id is not None
    if not ok or user_id is None or stored is None:
        return SignIn("failed")
    rehashed = await pool.hash(password) if pool.passwords.needs_rehash(stored) else None

    def finish() -> str | None:
        with database.write() as db:
            user = db.get(User, user_id)
            if user is None or not user.active or user.password_hash != stored:
                return None  # deactivated, or the password changed, while this attempt was hashed
            mark_success(db, attempt_id)
            if rehashed is not None:
                user.password_hash = rehashed
            token, _ = start_session(db, user, hours=session_hours)
            return token

    token = await run_in_threadpool(finish)
    return SignIn("ok", token=token) if token is not None else SignIn("failed")
