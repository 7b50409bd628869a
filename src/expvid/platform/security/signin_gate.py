"""Threads for the database work of signing in, where a flood of strangers cannot take the
threads reviewers, account owners and newcomers need, nor the interpreter time saves need.

Why: each sign-in reads the throttle and records the attempt (security/throttle.py). Run in the
app's shared thread pool, 80 clients guessing passwords queued their reads in front of every save
and page load, and the account's owner waited seconds for her sign-in form. Four threads of their
own still read the throttle for every attempt of a flood, the ones about to be refused included
(80 flooders: 80 % of attempts answered 503 after five queries each), competing with the saves for
the interpreter lock, and a newcomer's reads queued behind theirs. Here every attempt has a *kind*:

- `known`: an (account, source) pair that signed in successfully before (`KnownPairs`: the
  successes of the last `KEEP_ATTEMPTS`, from the database, refreshed every few minutes and at
  each success in this process): the `priority` threads;
- `suspect`: the account or the source failed a sign-in within the throttle's window, as this
  process saw it or the database held it when the process started (`RecentFailures`, what
  `throttle.classify` would call `other`): one thread, and the
  attempt is refused before any database work when the hashing lane `other` has no room for it
  (services/signin.py), so a flood the lanes cannot take costs no query at all;
- `clean`: anything else (a new colleague, a new computer): a thread of its own, which suspects'
  work never queues in front of.

`clean` and `suspect` each have at most `queue` steps waiting: past that, `HashingBusy` at once
(503 after a pause), without any database work. None touches the shared pool, so saves and pages
never wait behind sign-ins.

The kinds choose threads only: whether an attempt is trusted, clean or other is decided again in
the database when it is recorded (`throttle.classify`), where every worker process sees every
attempt. Both memories hold user names as typed, whether the account exists or not, so no kind
tells one from the other (no oracle on user names).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TypeVar

from sqlalchemy import select

from expvid.platform.db.engine import Database
from expvid.platform.db.models import LoginAttempt, utc_now
from expvid.platform.security.hashing import HashingBusy
from expvid.platform.security.throttle import KEEP_ATTEMPTS

T = TypeVar("T")
#: How often the known pairs are read again (other worker processes' successes).
REFRESH_S = 300.0
KNOWN, CLEAN, SUSPECT = "known", "clean", "suspect"
#: The most accounts, and sources, `RecentFailures` remembers (the oldest are forgotten first).
REMEMBERED = 100_000


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


class RecentFailures:
    """Accounts (as typed) and sources with a failed sign-in within `window_s`: those the database
    held when this process signed its first attempt in (`load`), and this process's since.

    A subset of what the database knows (other processes' failures since are missing): an attempt
    it names is certainly not `clean`; one it does not name may still be `other`, which the
    database decides when the attempt is recorded."""

    def __init__(self, window_s: float, *, remembered: int = REMEMBERED) -> None:
        self.window_s = window_s
        self.remembered = remembered
        self._last: dict[str, OrderedDict[str, float]] = {"account": OrderedDict(), "source": OrderedDict()}
        self._lock = threading.Lock()

    def add(self, account: str, source: str) -> None:
        now = time.monotonic()
        with self._lock:
            for kind, key in (("account", account), ("source", source)):
                seen = self._last[kind]
                seen[key] = now
                seen.move_to_end(key)
                while len(seen) > self.remembered:
                    seen.popitem(last=False)

    def load(self, database: Database) -> None:
        """Remember the failures the database holds within the window (at start: a restarted
        server otherwise did database work for every attempt of a flood until each failed again)."""
        now, wall = time.monotonic(), utc_now()
        with database.read() as db:
            rows = db.execute(
                select(LoginAttempt.username, LoginAttempt.ip, LoginAttempt.at)
                .where(
                    LoginAttempt.success.is_(False), LoginAttempt.at > wall - timedelta(seconds=self.window_s)
                )
                .order_by(LoginAttempt.at)
            ).all()
        with self._lock:
            for account, source, at in rows:
                seen_at = now - (wall - at).total_seconds()
                for kind, key in (("account", account), ("source", source)):
                    seen = self._last[kind]
                    seen[key] = max(seen.get(key, seen_at), seen_at)
                    seen.move_to_end(key)
                    while len(seen) > self.remembered:
                        seen.popitem(last=False)

    def failed(self, account: str, source: str) -> bool:
        since = time.monotonic() - self.window_s
        with self._lock:
            return any(
                self._last[kind].get(key, float("-inf")) > since
                for kind, key in (("account", account), ("source", source))
            )


class Unsettled:
    """Ids of the attempts from each source that this process recorded and is still checking.

    Why: an attempt is recorded as a failure before its hash (throttle.reserve_attempt), so that
    concurrency buys no free guesses. Counted as a failure of its *source* for the lane too, the
    first of ten colleagues signing in at nine from one office address sent the other nine to the
    strangers' lane (`other`), where they waited 4-17 s with nobody attacking. `throttle.classify`
    leaves these ids out of its source check; they count again once their hash has failed.
    Other worker processes' attempts are not here: there they count as failures (the safe side)."""

    def __init__(self) -> None:
        self._ids: dict[str, set[int]] = {}
        self._lock = threading.Lock()

    def of(self, source: str) -> frozenset[int]:
        with self._lock:
            return frozenset(self._ids.get(source, ()))

    def add(self, source: str, attempt_id: int) -> None:
        with self._lock:
            self._ids.setdefault(source, set()).add(attempt_id)

    def settle(self, source: str, attempt_id: int) -> None:
        with self._lock:
            ids = self._ids.get(source)
            if ids is not None:
                ids.discard(attempt_id)
                if not ids:
                    del self._ids[source]


class SignInGate:
    def __init__(
        self, database: Database, *, window_s: float = 3600.0, strangers: int = 1, clean: int = 1,
        queue: int = 64, priority: int = 2,
    ) -> None:  # fmt: skip
        self.known = KnownPairs(database)
        self.recent = RecentFailures(window_s)
        self.unsettled = Unsettled()
        self.queue = queue
        self._threads = {
            KNOWN: ThreadPoolExecutor(max_workers=priority, thread_name_prefix="signin-known"),
            CLEAN: ThreadPoolExecutor(max_workers=clean, thread_name_prefix="signin-clean"),
            SUSPECT: ThreadPoolExecutor(max_workers=strangers, thread_name_prefix="signin"),
        }
        self._lock = threading.Lock()
        self._waiting: Counter[str] = Counter()
        #: Attempts turned away because their kind's queue was full (tests, benchmark).
        self.turned_away = 0
        #: Suspects refused before any database work, the `other` lane having no room (tests, benchmark).
        self.refused_early = 0
        #: Database steps run, and attempts that ran any (their first step), per kind (tests, benchmark).
        self.steps: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()
        self._load_lock = asyncio.Lock()
        self._failures_loaded = False

    async def known_pair(self, account: str, source: str) -> bool:
        """Whether the pair signed in before (the first call reads the database, off the event loop)."""
        if time.monotonic() - self.known._loaded_at > REFRESH_S:
            async with self._load_lock:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._threads[KNOWN], self.known.knows, account, source)
                if not self._failures_loaded:  # once: this process's memory starts from the database's
                    await loop.run_in_executor(self._threads[KNOWN], self.recent.load, self.known.database)
                    self._failures_loaded = True
        return self.known.knows(account, source)

    def kind_of(self, known: bool, account: str, source: str) -> str:
        if known:
            return KNOWN
        return SUSPECT if self.recent.failed(account, source) else CLEAN

    async def run(self, kind: str, work: Callable[[], T], *, bounded: bool = False) -> T:
        """Run blocking database work on the threads of the attempt's `kind`. `bounded` (the first
        step of an attempt that is not `known`): raise HashingBusy at once, having done nothing,
        when `queue` such steps of its kind wait already."""
        loop = asyncio.get_running_loop()
        if not bounded or kind == KNOWN:
            self._count(kind, bounded)
            return await loop.run_in_executor(self._threads[kind], work)
        with self._lock:
            if self._waiting[kind] >= self.queue:
                self.turned_away += 1  # did no database work: counted here only, not as a step
                raise HashingBusy()
            self._waiting[kind] += 1
        self._count(kind, bounded)
        try:
            return await loop.run_in_executor(self._threads[kind], work)
        finally:
            with self._lock:
                self._waiting[kind] -= 1

    def _count(self, kind: str, first: bool) -> None:
        self.steps[kind] += 1
        self.attempts[kind] += first

    def close(self) -> None:
        for threads in self._threads.values():
            threads.shutdown(wait=False, cancel_futures=True)
