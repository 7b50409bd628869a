"""Signing in, in steps so that no transaction is open while a password is hashed, and so that
strangers cannot spend the hashing capacity an account's owner needs.

0. the gate (security/signin_gate.py): the database work of an attempt from a pair that signed in
   before runs on its own threads; a newcomer's (no failure of the account or source seen) on a
   thread of its own; a suspect's (one seen) on one more, never the shared pool. A suspect attempt
   is refused before any database work when the `other` hashing lane has no room for it: a flood
   the lanes cannot take then costs no query at all.
1. `look` (a read, no lock): is this client throttled, and which hashing lane would the attempt
   take (security/throttle.py `classify`)? A lane with no room answers `HashingBusy` at once: a
   flood the lanes cannot take costs a read per attempt, never a write.
2. `reserve` (short write transaction): check the throttle again and record the attempt as a
   failure, atomically per client source; take the attempt's place in its lane just before
   recording it (a shed attempt is not recorded, so it never counts as a failure); read the
   account's stored hash. Until its hash ends the attempt is *unsettled* (`SignInGate.unsettled`):
   it does not send other attempts from its source to the strangers' lane (an office at nine).
3. hash: verify the password in its lane (security/hashing.py), holding no connection and no lock.
4. on success only (short write transaction): turn the attempt into a success, start the session,
   store a re-hash if the costs changed (computed before the transaction).

An unknown or inactive account is verified against a dummy hash of the current cost, in the lane
its history gives it (known or not, the same): the answer costs and takes as long.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.models import User, utc_now
from expvid.platform.security.client import source_key
from expvid.platform.security.hashing import OTHER, HashingBusy, HashPool, Ticket
from expvid.platform.security.sessions import start_session
from expvid.platform.security.signin_gate import SUSPECT, SignInGate
from expvid.platform.security.throttle import check_throttle, classify, mark_success, reserve_attempt

T = TypeVar("T")
#: Longer passwords (or user names) fail without being hashed: hashing a megabyte costs real time.
MAX_PASSWORD = 1024


@dataclass(frozen=True)
class SignIn:
    #: "ok", "failed" or "throttled".
    outcome: str
    token: str | None = None
    retry_after_s: int = 0
    #: The hashing lane the attempt took (trusted, clean, other), for the dashboard and the tests.
    lane: str | None = None


@dataclass
class _Reserved:
    retry_after_s: int
    attempt_id: int | None = None
    ticket: Ticket | None = None
    user_id: int | None = None
    stored: str | None = None


async def sign_in(
    database: Database,
    pool: HashPool,
    policy: ThrottlePolicy,
    *,
    username: str,
    password: str,
    ip: str,
    session_hours: float,
    gate: SignInGate | None = None,
) -> SignIn:
    """One sign-in attempt; raises `HashingBusy` when its lane has no room for it. The database
    work runs on the `gate`'s threads (security/signin_gate.py), else on the shared pool."""
    source = source_key(ip)
    known = gate is not None and await gate.known_pair(username[:64], source)
    return await _sign_in(database, pool, policy, username, password, source, session_hours, gate, known)


async def _sign_in(
    database: Database, pool: HashPool, policy: ThrottlePolicy, username: str, password: str, source: str,
    session_hours: float, gate: SignInGate | None, known: bool,
) -> SignIn:  # fmt: skip
    account = username[:64]
    kind = gate.kind_of(known, account, source) if gate is not None else None
    if kind == SUSPECT:
        # `classify` will say `other` (or `trusted`, for a pair another worker process saw sign in
        # lately): with no room there, refuse before any database work.
        try:
            pool.check(OTHER, source, account)
        except HashingBusy:
            gate.refused_early += 1  # type: ignore[union-attr]  # kind is only SUSPECT with a gate
            raise

    async def blocking(work: Callable[[], T], *, first: bool = False) -> T:
        """On the gate's threads; a stranger's first step may be turned away (HashingBusy)."""
        if gate is None or kind is None:
            return await run_in_threadpool(work)
        return await gate.run(kind, work, bounded=first)

    def unsettled() -> frozenset[int]:
        return gate.unsettled.of(source) if gate is not None else frozenset()

    def look() -> tuple[int, str | None]:
        with database.read() as db:
            now = utc_now()
            verdict = check_throttle(db, policy, username=account, ip=source, now=now)
            if not verdict.allowed:
                return verdict.retry_after_s, None
            return 0, classify(db, policy, username=account, ip=source, now=now, unsettled=unsettled())

    retry_after, lane = await blocking(look, first=True)
    if lane is None:
        return SignIn("throttled", retry_after_s=retry_after)
    pool.check(lane, source, account)

    def reserve() -> _Reserved:
        with database.write() as db:
            verdict, attempt_id, ticket = reserve_attempt(
                db, policy, username=account, ip=source, admit=lambda lane: pool.admit(lane, source, account),
                unsettled=unsettled(),
            )  # fmt: skip
            reserved = _Reserved(verdict.retry_after_s, attempt_id, ticket)
            try:
                if attempt_id is not None and gate is not None:
                    # Before the commit: no other attempt from this source sees it as a failure yet.
                    gate.unsettled.add(source, attempt_id)
                if attempt_id is not None:
                    user = (
                        db.scalar(select(User).where(User.username == username))
                        if len(username) <= 64
                        else None
                    )
                    if user is not None and user.active:
                        reserved.user_id, reserved.stored = user.id, user.password_hash
            except BaseException:
                if ticket is not None:
                    pool.cancel(ticket)
                if attempt_id is not None and gate is not None:
                    gate.unsettled.settle(source, attempt_id)
                raise
        return reserved

    async def _check(reserved: _Reserved) -> SignIn:
        """Hash outside any transaction; on success turn the attempt into one and open a session."""
        assert reserved.ticket is not None and reserved.attempt_id is not None
        ticket, user_id, stored = reserved.ticket, reserved.user_id, reserved.stored
        try:
            ok = len(password) <= MAX_PASSWORD and await pool.verify_with(ticket, stored, password)
        finally:
            pool.cancel(ticket)  # a no-op once its hash ran; gives the place back if none did
        if not ok or user_id is None or stored is None:
            if gate is not None:
                gate.recent.add(account, source)  # recorded as a failure in the database already
            return SignIn("failed", lane=ticket.lane)
        rehashed = await pool.hash(password) if pool.passwords.needs_rehash(stored) else None
        attempt_id = reserved.attempt_id

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

        token = await blocking(finish)
        if gate is not None:
            if token is not None:
                gate.known.add(account, source)
            else:
                gate.recent.add(account, source)
        lane = ticket.lane
        return SignIn("ok", token=token, lane=lane) if token is not None else SignIn("failed", lane=lane)

    reserved = await blocking(reserve)
    if reserved.attempt_id is None or reserved.ticket is None:
        return SignIn("throttled", retry_after_s=reserved.retry_after_s)
    try:
        return await _check(reserved)
    finally:
        if gate is not None:  # a failure counts for its source from now on
            gate.unsettled.settle(source, reserved.attempt_id)
