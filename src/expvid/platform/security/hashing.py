"""argon2 work where it cannot stall reviewers: off the event loop, outside every database
transaction, a bounded number at a time, at the lowest CPU priority.

Why: a password hash is meant to be expensive (64 MiB and tens of milliseconds per attempt at the
default costs). Hashed inside the write transaction that checks the login throttle, eight strangers
sending wrong passwords from rotating addresses held SQLite's single write lock most of the time
(10 reviewers fell from 36.8 to 1.3 saves/s); hashed in the request thread pool, forty at once
took the server's memory and CPU (PostgreSQL: 4.2 saves/s, 1.27 GB). Here:

- hashes run on `slots` dedicated threads (default 1; each hash uses `parallelism` lanes), so at
  most `slots x memory` is ever allocated for them;
- those threads run at nice 19 (Linux; the lanes argon2 starts inherit it), so a save that needs the
  CPU gets it first: a flood of sign-ins slows the sign-ins, not the reviewers;
- at most `queue` attempts wait for a slot; a waiting attempt holds no thread, no connection and no
  transaction. Past that, `HashingBusy` (the login answers 503 with Retry-After, after a pause).

Sign-ins of anonymous clients use `verify(..., shed=True)`; hashing a password an admin or the user
sets waits its turn however long the queue (`shed=False`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from expvid.platform.security.passwords import Passwords

T = TypeVar("T")
LOWEST_PRIORITY = 19


class HashingBusy(Exception):
    """Too many sign-ins are waiting for a hash already; try again shortly."""


def _lower_priority(nice: int) -> None:
    """Lower the calling thread's CPU priority (Linux: nice is per thread); elsewhere a no-op."""
    if nice <= 0 or not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    with contextlib.suppress(OSError):  # not permitted here: the bound on slots still holds
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)


class HashPool:
    def __init__(
        self,
        passwords: Passwords,
        *,
        slots: int = 1,
        queue: int = 64,
        nice: int = LOWEST_PRIORITY,
        share: float = 1.0,
    ) -> None:
        self.passwords = passwords
        self.slots, self.queue = slots, queue
        #: The most of its time a slot spends hashing: after a hash of t seconds it rests t*(1/share-1).
        self.share = min(1.0, max(0.05, share))
        self._rest_until: dict[int, float] = {}
        self._executor = ThreadPoolExecutor(
            max_workers=slots, thread_name_prefix="argon2", initializer=_lower_priority, initargs=(nice,)
        )
        self._lock = threading.Lock()
        self._pending = 0
        #: Hashes done, attempts shed, and the most hashes ever running at once (tests, benchmark).
        self.done = 0
        self.shed = 0
        self.running = 0
        self.peak_running = 0

    @property
    def pending(self) -> int:
        """Hashes running or waiting for a slot."""
        return self._pending

    def _counted(self, work: Callable[[], T]) -> T:
        # Rest as long as the share asks since this slot's last hash (no wait when it was idle).
        rest = self._rest_until.get(threading.get_ident(), 0.0) - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        with self._lock:
            self.running += 1
            self.peak_running = max(self.peak_running, self.running)
        started = time.monotonic()
        try:
            return work()
        finally:
            ended = time.monotonic()
            self._rest_until[threading.get_ident()] = ended + (ended - started) * (1 / self.share - 1)
            with self._lock:
                self.running -= 1

    def _submit(self, work: Callable[[], T], *, shed: bool) -> Future[T]:
        with self._lock:
            if shed and self._pending >= self.slots + self.queue:
                self.shed += 1
                raise HashingBusy()
            self._pending += 1
        future = self._executor.submit(self._counted, work)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: Future[Any]) -> None:
        with self._lock:
            self._pending -= 1
            self.done += 1

    async def verify(self, stored_hash: str | None, password: str, *, shed: bool = True) -> bool:
        """Whether `password` matches (`stored_hash` None: an unknown user, verified against a dummy
        hash so that the answer takes as long)."""
        return await asyncio.wrap_future(
            self._submit(lambda: self.passwords.verify(stored_hash, password), shed=shed)
        )

    async def hash(self, password: str) -> str:
        return await asyncio.wrap_future(self._submit(lambda: self.passwords.hash(password), shed=False))

    def hash_blocking(self, password: str) -> str:
        """`hash` for code running in a worker thread (never on the event loop)."""
        return self._submit(lambda: self.passwords.hash(password), shed=False).result()

    def verify_blocking(self, stored_hash: str | None, password: str) -> bool:
        return self._submit(lambda: self.passwords.verify(stored_hash, password), shed=False).result()

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
