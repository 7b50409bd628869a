"""Threads for the database work of signing in, where a flood of strangers cannot take the
threads reviewers and account owners need.

Why: each sign-in reads the throttle and records the attempt (security/throttle.py). Run in the
app's shared thread pool, 80 clients guessing passwords queued their reads in front of every save
and page load, and the account's owner waited seconds for her sign-in form. Here:

- attempts at an (account, source) pair that signed in successfully before (`KnownPairs`: the
  successes of the last `KEEP_ATTEMPTS`, from the database, refreshed every few minutes and at each
  success in this process) use the `priority` threads;
- every other attempt uses the `strangers` threads, at most `queue` of them waiting: past that,
  `HashingBusy` at once (503 after a pause), without any database work;
- neither touches the shared pool, so saves and pages never wait behind sign-ins.

The known pairs choose threads only: whether an attempt is trusted is decided again in the
database when it is recorded (`throttle.classify`), where every worker process sees every success.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy import select

from expvid.platform.db.engine import Database
from expvid.platform.db.models import LoginAttempt, utc_now
from expvid.platform.security.hashing import HashingBusy
from expvid.platform.security.throttle import KEEP_ATTEMPTS

T = TypeVar("T")
#: How often the known pairs are read again (other worker processes' successes).
REFRESH_S = 300.0


class KnownPairs:
    """(account, source) pairs with a successful sign-in in the last `KEEP_ATTEMPTS`."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._pairs: set[tuple[str, str]] = set()
        self._loaded_at = float("-inf")
        self._lock = threading.Lock()

    def _load(self) -> None:
        since = utc_now() - KEEP_ATTEMPTS
        with self.database.read() as db:
            rows = db.execute(
                select(LoginAttempt.username, LoginAttempt.ip)
                .where(LoginAttempt.success.is_(True), LoginAttempt.at > since)
                .distinct()
            ).all()
        with self._lock:
            self._pairs = {(u, i) for u, i in rows}
            self._loaded_at = time.monotonic()

    def knows(self, account: str, source: str) -> bool:
        if time.monotonic() - self._loaded_at > REFRESH_S:
            self._load()
        return (account, source) in self._pairs

    def add(self, account: str, source: str) -> None:
        with self._lock:
            self._pairs.add((account, source))


class SignInGate:
    def __init__(self, database: Database, *, strangers: int = 4, queue: int = 64, priority: int = 2) -> None:
        self.known = KnownPairs(database)
        self.queue = queue
        self._strangers = ThreadPoolExecutor(max_workers=strangers, thread_name_prefix="signin")
        self._priority = ThreadPoolExecutor(max_workers=priority, thread_name_prefix="signin-known")
        self._lock = threading.Lock()
        self._waiting = 0
        #: Attempts turned away because the strangers' queue was full (tests, benchmark).
        self.turned_away = 0
        self._load_lock = asyncio.Lock()

    async def known_pair(self, account: str, source: str) -> bool:
        """Whether the pair signed in before (the first call reads the database, off the event loop)."""
        if time.monotonic() - self.known._loaded_at > REFRESH_S:
            async with self._load_lock:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._priority, self.known.knows, account, source)
        return self.known.knows(account, source)

    async def run(self, known: bool, work: Callable[[], T], *, bounded: bool = False) -> T:
        """Run blocking database work on the pair's threads. `bounded` (a stranger's first step):
        raise HashingBusy at once, having done nothing, when `queue` such steps wait already."""
        loop = asyncio.get_running_loop()
        if not bounded:
            return await loop.run_in_executor(self._priority if known else self._strangers, work)
        with self._lock:
            if self._waiting >= self.queue:
                self.turned_away += 1
                raise HashingBusy()
            self._waiting += 1
        try:
            return await loop.run_in_executor(self._strangers, work)
        finally:
            with self._lock:
                self._waiting -= 1

    def close(self) -> None:
        self._strangers.shutdown(wait=False, cancel_futures=True)
        self._priority.shutdown(wait=False, cancel_futures=True)
