"""Login throttling with growing delays per (account, client) and per client; never a lockout.

Why not a lockout: locking an account after five wrong passwords lets anyone lock out any reviewer.
Here failures count per (account, client address) since that pair's last success, so a stranger
guessing at "alice" from elsewhere slows down only themselves, and per client address over all
accounts, so one client cannot spray passwords over many accounts. After the free failures each
attempt must wait twice as long as the previous one (see `ThrottlePolicy`). Refused attempts are
answered without checking the password (no oracle while throttled) and are not counted.

Attempts are stored in the database, so the delays hold across server workers and restarts, and the
dashboard shows the admin which accounts are being guessed at and from how many clients.

Atomic: `reserve_attempt` checks the delays and records the attempt as a failure in one short
transaction, serialized per client address (SQLite: its single writer; PostgreSQL: a transaction-
level advisory lock on the address), before the password is hashed outside any transaction. Forty
simultaneous guesses from one client therefore see each other: five are checked, the rest wait.
A correct password turns its reserved row into a success (`mark_success`).

Lanes (`classify`, for the hashing pool, security/hashing.py): an attempt whose account signed in
from this source within `KEEP_ATTEMPTS` and has fewer than the free failures from it since is
`trusted` (its owner at their own computer); one from a source and at an account with no failed
attempt in the window is `clean` (attempts from the source still being checked do not count: see
`classify`); the rest is `other`. Only attempts are looked at, never the
accounts table, so a user name that does not exist is classified as one that does (no oracle).
Sources are `client.source_key`s (an address, or an IPv6 /64).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy import and_, delete, func, select, text, update
from sqlalchemy.orm import Session

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.models import LoginAttempt, User, utc_now
from expvid.platform.security.client import source_key
from expvid.platform.security.hashing import CLEAN, OTHER, TRUSTED

T = TypeVar("T")

#: Attempts older than this are deleted when someone signs in (the table stays small).
KEEP_ATTEMPTS = timedelta(days=30)


@dataclass(frozen=True)
class ThrottleVerdict:
    allowed: bool
    retry_after_s: int = 0
    #: "account" (this account from this client) or "client" (this client over all accounts).
    scope: str = ""


def delay_after(failures: int, free: int, policy: ThrottlePolicy) -> float:
    """Seconds the next attempt must wait after the last of `failures` counted failures."""
    if failures < free:
        return 0.0
    return float(min(policy.max_delay_seconds, policy.base_delay_seconds * 2.0 ** (failures - free)))


def _wait(count: int, last: datetime | None, free: int, policy: ThrottlePolicy, now: datetime) -> float:
    delay = delay_after(count, free, policy)
    if last is None or delay <= 0:
        return 0.0
    return delay - (now - last).total_seconds()


def _pair_failures(db: Session, username: str, ip: str, since: datetime) -> tuple[int, datetime | None]:
    pair = (LoginAttempt.username == username) & (LoginAttempt.ip == ip)
    last_ok = db.scalar(select(func.max(LoginAttempt.at)).where(pair, LoginAttempt.success.is_(True)))
    start = max(since, last_ok) if last_ok is not None else since
    count, last = db.execute(
        select(func.count(), func.max(LoginAttempt.at)).where(
            pair, LoginAttempt.success.is_(False), LoginAttempt.at > start
        )
    ).one()
    return int(count), last


def check_throttle(
    db: Session, policy: ThrottlePolicy, *, username: str, ip: str, now: datetime | None = None
) -> ThrottleVerdict:
    now = now or utc_now()
    since = now - timedelta(seconds=policy.window_seconds)
    username, ip = username[:64], source_key(ip)
    count, last = _pair_failures(db, username, ip, since)
    wait_pair = _wait(count, last, policy.free_failures_per_pair, policy, now)
    count_ip, last_ip = db.execute(
        select(func.count(), func.max(LoginAttempt.at)).where(
            LoginAttempt.ip == ip, LoginAttempt.success.is_(False), LoginAttempt.at > since
        )
    ).one()
    wait_ip = _wait(int(count_ip), last_ip, policy.free_failures_per_client, policy, now)
    wait, scope = max((wait_pair, "account"), (wait_ip, "client"))
    if wait > 0:
        return ThrottleVerdict(False, max(1, math.ceil(wait)), scope)
    return ThrottleVerdict(True)


def classify(
    db: Session,
    policy: ThrottlePolicy,
    *,
    username: str,
    ip: str,
    now: datetime | None = None,
    unsettled: Collection[int] = (),
) -> str:
    """The hashing lane of an attempt at `username` from `ip` (see the module docstring).

    `unsettled`: ids of attempts from `ip` still being checked (recorded as failures until their
    hash ends, security/signin_gate.py `Unsettled`). They do not make the source `other`: ten
    colleagues signing in at nine from one office address are not one client failing ten times.
    They still count for the account (one account tried from several places at once is a guess),
    and for the throttle (`check_throttle`), so concurrency never buys a stranger free attempts."""
    now = now or utc_now()
    username, ip = username[:64], source_key(ip)
    pair = (LoginAttempt.username == username) & (LoginAttempt.ip == ip)
    last_ok = db.scalar(
        select(func.max(LoginAttempt.at)).where(
            pair, LoginAttempt.success.is_(True), LoginAttempt.at > now - KEEP_ATTEMPTS
        )
    )
    if last_ok is not None:
        since_ok = db.scalar(
            select(func.count()).where(pair, LoginAttempt.success.is_(False), LoginAttempt.at > last_ok)
        )
        if int(since_ok or 0) < policy.free_failures_per_pair:
            return TRUSTED
    since = now - timedelta(seconds=policy.window_seconds)
    failed = LoginAttempt.success.is_(False) & (LoginAttempt.at > since)
    from_here = LoginAttempt.ip == ip
    if unsettled:
        from_here = from_here & LoginAttempt.id.not_in(list(unsettled))
    for who in (from_here, LoginAttempt.username == username):
        if db.scalar(select(LoginAttempt.id).where(who, failed).limit(1)) is not None:
            return OTHER
    return CLEAN


def record_attempt(
    db: Session, *, username: str, ip: str, success: bool, now: datetime | None = None
) -> None:
    now = now or utc_now()
    db.add(LoginAttempt(username=username[:64], ip=source_key(ip), success=success, at=now))
    if success:
        # A success ends this pair's count by being the newest success (nothing is deleted, so the
        # dashboard keeps the failures); only very old attempts are pruned.
        db.execute(delete(LoginAttempt).where(LoginAttempt.at < now - KEEP_ATTEMPTS))


def _lock_client(db: Session, ip: str) -> None:
    """Serialize attempts from one client address until the transaction ends: a PostgreSQL
    advisory lock; on SQLite the first statement of a write transaction takes the database's single
    write lock (BEGIN IMMEDIATE)."""
    if db.get_bind().dialect.name != "postgresql":
        db.execute(text("SELECT 1"))
        return
    key = int.from_bytes(hashlib.sha256(f"expvid-login:{ip}".encode()).digest()[:8], "big", signed=True)
    db.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def reserve_attempt(
    db: Session,
    policy: ThrottlePolicy,
    *,
    username: str,
    ip: str,
    now: datetime | None = None,
    admit: Callable[[str], T] | None = None,
    unsettled: Collection[int] = (),
) -> tuple[ThrottleVerdict, int | None, T | None]:
    """Check the delays and, if the attempt may go on, record it as a failure (call in a write
    transaction and commit before hashing); returns the verdict, the attempt's row id and what
    `admit(lane)` returned. `admit` is called before anything is recorded: when it raises (the
    hashing lane is full), nothing is, so a shed attempt never counts as a failure."""
    username, ip = username[:64], source_key(ip)
    _lock_client(db, ip)
    # The clock is read once the lock is held: attempts are then recorded in the order they were
    # checked, and none sees another's record as lying in its future.
    now = now or utc_now()
    verdict = check_throttle(db, policy, username=username, ip=ip, now=now)
    if not verdict.allowed:
        return verdict, None, None
    admitted: T | None = None
    if admit is not None:
        admitted = admit(classify(db, policy, username=username, ip=ip, now=now, unsettled=unsettled))
    attempt = LoginAttempt(username=username, ip=ip, success=False, at=now)
    db.add(attempt)
    db.flush()
    return verdict, attempt.id, admitted


def mark_success(db: Session, attempt_id: int, *, now: datetime | None = None) -> None:
    """The reserved attempt was the right password: it ends its pair's count of failures."""
    now = now or utc_now()
    db.execute(update(LoginAttempt).where(LoginAttempt.id == attempt_id).values(success=True))
    db.execute(delete(LoginAttempt).where(LoginAttempt.at < now - KEEP_ATTEMPTS))


@dataclass
class GuessedAccount:
    """An account with failed sign-ins in the report's period (for the admin's dashboard)."""

    username: str
    exists: bool
    failures: int
    clients: int
    last_failure: datetime
    #: Clients that must wait before their next attempt at this account, with the seconds left.
    delayed: list[tuple[str, int]]


def throttle_report(
    db: Session, policy: ThrottlePolicy, *, hours: float = 24.0, now: datetime | None = None, limit: int = 50
) -> list[GuessedAccount]:
    """Accounts with failed sign-ins in the last `hours`, most failures first."""
    now = now or utc_now()
    period = now - timedelta(hours=hours)
    since = now - timedelta(seconds=policy.window_seconds)
    rows = db.execute(
        select(LoginAttempt.username, LoginAttempt.ip, func.count(), func.max(LoginAttempt.at))
        .where(LoginAttempt.success.is_(False), LoginAttempt.at > period)
        .group_by(LoginAttempt.username, LoginAttempt.ip)
    ).all()
    known = set(
        db.scalars(select(User.username).where(User.username.in_({r[0] for r in rows}))) if rows else []
    )
    accounts: dict[str, GuessedAccount] = {}
    for username, ip, count, last in rows:
        entry = accounts.setdefault(username, GuessedAccount(username, username in known, 0, 0, last, []))
        entry.failures += int(count)
        entry.clients += 1
        entry.last_failure = max(entry.last_failure, last)
        pair_count, pair_last = _pair_failures(db, username, ip, since)
        wait = _wait(pair_count, pair_last, policy.free_failures_per_pair, policy, now)
        if wait > 0:
            entry.delayed.append((ip, math.ceil(wait)))
    ranked = sorted(accounts.values(), key=lambda a: (-a.failures, a.username))
    return ranked[:limit]


def clients_delayed(
    db: Session, policy: ThrottlePolicy, *, now: datetime | None = None
) -> list[tuple[str, int, int]]:
    """Client addresses currently delayed over all accounts: (address, failures, seconds left)."""
    now = now or utc_now()
    since = now - timedelta(seconds=policy.window_seconds)
    rows = db.execute(
        select(LoginAttempt.ip, func.count(), func.max(LoginAttempt.at))
        .where(and_(LoginAttempt.success.is_(False), LoginAttempt.at > since))
        .group_by(LoginAttempt.ip)
        .having(func.count() >= policy.free_failures_per_client)
    ).all()
    result = []
    for ip, count, last in rows:
        wait = _wait(int(count), last, policy.free_failures_per_client, policy, now)
        if wait > 0:
            result.append((ip, int(count), math.ceil(wait)))
    return sorted(result, key=lambda r: -r[1])
