"""argon2 work where it cannot stall reviewers, and where strangers cannot spend what owners need.

Why: a password hash is meant to be expensive (64 MiB and tens of milliseconds per attempt at the
default costs). Hashed inside the write transaction that checks the login throttle, eight strangers
sending wrong passwords from rotating addresses held SQLite's single write lock most of the time
(10 reviewers fell from 36.8 to 1.3 saves/s); hashed in the request thread pool, forty at once
took the server's memory and CPU (PostgreSQL: 4.2 saves/s, 1.27 GB). And with one first-come
queue, 80 strangers filled it and the owner of an account, signing in with the right password,
got 503 three times out of three (8 strangers: 2.7-3.4 s instead of 0.3 s). Here:

- every sign-in attempt is put in a *lane* by what the database knows of it (`services/signin.py`):
  `trusted` (this account signed in from this source before and is not being guessed at from it),
  `clean` (neither the source nor the account failed recently) or `other`;
- `trusted` attempts, and hashing a password that an admin or the user sets, run on their own
  thread at normal priority: nothing a stranger sends can queue in front of them;
- `clean` attempts (new colleagues, a new computer) have a thread at nice 10, and `clean` then
  `other` attempts share `slots` threads (default 1) at nice 19; both hash at most `share` of the
  time, and a fifth of that after an `other` hash (`STRANGER_SHARE`): argon2's memory traffic, which
  no CPU priority holds back, evicts the caches saves run in, so what strangers can spend is bounded
  in time, not only in priority (80 flooders at a half share: about 3.5 hashes of 64 MiB a second,
  saves at 0.72-0.79 of their unloaded rate). Anyone can make a `clean` attempt (a new address, a
  new name), so that thread stays below normal priority: on a busy machine a first sign-in takes
  longer, a save does not;
- within a lane, waiting attempts are served in turn per account (round robin), not first come: a
  flood at a few accounts queues behind itself, and an attempt at any other account (a colleague who
  mistyped her password once, so in `other`) waits for one hash per account ahead, not for the flood;
- every lane has a bounded queue, and within it, once it is half full, each source (client
  address, IPv6 /64) and each account (user name as typed, known or not) a bounded share: one
  client, or a flood at one account, cannot fill a lane. Past a bound, `HashingBusy` (the login answers 503 after a pause).
  A waiting attempt holds no thread, no connection and no transaction.

So at most `slots + 2` hashes (each `memory` KiB) ever run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from expvid.platform.security.passwords import Passwords

T = TypeVar("T")
LOWEST_PRIORITY = 19
#: CPU priority of the thread that hashes `clean` attempts (between the owners' and the strangers').
CLEAN_NICE = 10

TRUSTED, CLEAN, OTHER = "trusted", "clean", "other"
#: Work nobody outside can cause (a password an admin or the user sets): the priority thread, unshed.
INTERNAL = "internal"
LANES = (TRUSTED, CLEAN, OTHER)
#: After a hash in the `other` lane a slot rests as if its share were this fraction of `share`.
STRANGER_SHARE = 0.2


class HashingBusy(Exception):
    """Too many sign-ins of this kind are waiting for a hash already; try again shortly."""


def _lower_priority(nice: int) -> None:
    """Lower the calling thread's CPU priority (Linux: nice is per thread); elsewhere a no-op."""
    if nice <= 0 or not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    with contextlib.suppress(OSError):  # not permitted here: the bounds on slots still hold
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)


@dataclass(frozen=True)
class LaneLimits:
    """How many attempts may wait in a lane, and how many of them one source or one account may own."""

    queue: int
    per_source: int
    per_account: int


@dataclass
class Ticket:
    """A place in a lane, taken before the attempt is recorded (`HashPool.admit`) and given back
    when its hash ends (`HashPool.run`) or when the attempt goes no further (`HashPool.cancel`)."""

    lane: str
    source: str
    account: str
    done: bool = False


@dataclass
class _Job:
    ticket: Ticket
    work: Callable[[], Any]
    future: Future[Any] = field(default_factory=Future)
    queued_at: float = field(default_factory=time.monotonic)


class _TurnQueue:
    """Waiting jobs of one lane, served one account at a time in turn (first come within an account).

    Why: with one first-come queue, a flood at the reviewers' accounts filled the `other` lane and a
    colleague in it (one mistyped password) waited for all 64 strangers' hashes; in turns she waits
    for one hash per account with attempts ahead of hers."""

    def __init__(self) -> None:
        self._by_account: OrderedDict[str, deque[_Job]] = OrderedDict()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, job: _Job) -> None:
        self._by_account.setdefault(job.ticket.account, deque()).append(job)
        self._size += 1

    def popleft(self) -> _Job:
        """The oldest job of the account whose turn it is; that account's turn moves to the end."""
        account, jobs = next(iter(self._by_account.items()))
        job = jobs.popleft()
        del self._by_account[account]
        if jobs:
            self._by_account[account] = jobs
        self._size -= 1
        return job

    def drain(self) -> list[_Job]:
        jobs = [job for queue in self._by_account.values() for job in queue]
        self._by_account.clear()
        self._size = 0
        return jobs


class HashPool:
    def __init__(
        self,
        passwords: Passwords,
        *,
        slots: int = 1,
        queue: int = 64,
        nice: int = LOWEST_PRIORITY,
        share: float = 1.0,
        clean_queue: int = 32,
        trusted_queue: int = 32,
        per_source: int = 8,
        per_account: int = 16,
    ) -> None:
        self.passwords = passwords
        self.slots = slots
        #: The most of its time a shared slot spends hashing: after a hash of t seconds it rests t*(1/share-1).
        self.share = min(1.0, max(0.05, share))
        self.limits = {
            # No share per source here: an office whose people signed in from it before is one source.
            TRUSTED: LaneLimits(trusted_queue, trusted_queue + 1, max(1, min(per_account, 4))),
            CLEAN: LaneLimits(clean_queue, per_source, max(1, min(per_account, 4))),
            OTHER: LaneLimits(queue, per_source, per_account),
        }
        self._cond = threading.Condition()
        self._queues: dict[str, _TurnQueue] = {lane: _TurnQueue() for lane in (INTERNAL, *LANES)}
        self._pending: Counter[str] = Counter()  # lane -> tickets held (waiting or running)
        self._by_source: Counter[tuple[str, str]] = Counter()
        self._by_account: Counter[tuple[str, str]] = Counter()
        self._closed = False
        #: Hashes done, attempts shed (per lane), and the most hashes ever running at once.
        self.done = 0
        self.done_by_lane: Counter[str] = Counter()
        self.shed = 0
        self.shed_by_lane: Counter[str] = Counter()
        self.running = 0
        self.peak_running = 0
        #: Per lane, the longest an attempt waited for its hash, and the longest a hash took (s):
        #: logged when the server stops (`summary`), so a benchmark can tell queueing from hashing.
        self.longest_wait: dict[str, float] = {}
        self.longest_hash: dict[str, float] = {}
        #: Lane -> threads of its own waiting idle for it; a shared slot leaves such a lane's jobs to them.
        self._idle: Counter[str] = Counter()
        self._threads = [
            threading.Thread(target=self._serve, args=((INTERNAL, TRUSTED), 0, 1.0, True), daemon=True,
                             name="argon2-priority"),
            threading.Thread(target=self._serve, args=((CLEAN,), min(nice, CLEAN_NICE), self.share, True),
                             daemon=True, name="argon2-clean"),
        ] + [
            threading.Thread(target=self._serve, args=((CLEAN, OTHER), nice, self.share, False), daemon=True,
                             name=f"argon2-{i}")
            for i in range(slots)
        ]  # fmt: skip
        for thread in self._threads:
            thread.start()

    # --- admission -------------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Attempts holding a place (running or waiting), all lanes."""
        with self._cond:
            return sum(self._pending.values())

    def pending_in(self, lane: str) -> int:
        with self._cond:
            return self._pending[lane]

    def _refusal(self, lane: str, source: str, account: str) -> str | None:
        limits = self.limits[lane]
        held = self._pending[lane]
        if held >= limits.queue + (self.slots if lane != TRUSTED else 1):
            return "lane"
        # The shares bind once the lane is half full: ten colleagues behind one office address
        # signing in at nine are not a flood, and are not refused while there is room.
        if held < limits.queue // 2:
            return None
        if self._by_source[(lane, source)] >= limits.per_source:
            return "source"
        if self._by_account[(lane, account)] >= limits.per_account:
            return "account"
        return None

    def check(self, lane: str, source: str, account: str) -> None:
        """Raise HashingBusy (counted as shed) if `admit` would refuse now: a cheap look before any
        database write, so that a flood the lane cannot take costs one read per attempt."""
        with self._cond:
            self._refuse_if_full(lane, source, account)

    def admit(self, lane: str, source: str, account: str) -> Ticket:
        """Take a place in `lane` for one attempt from `source` at `account`, or raise HashingBusy."""
        with self._cond:
            self._refuse_if_full(lane, source, account)
            ticket = Ticket(lane, source, account)
            self._take(ticket)
            return ticket

    def _refuse_if_full(self, lane: str, source: str, account: str) -> None:
        if lane not in self.limits:
            raise ValueError(f"unknown lane {lane!r}")
        if self._refusal(lane, source, account) is not None:
            self.shed += 1
            self.shed_by_lane[lane] += 1
            raise HashingBusy()

    def _take(self, ticket: Ticket) -> None:
        self._pending[ticket.lane] += 1
        self._by_source[(ticket.lane, ticket.source)] += 1
        self._by_account[(ticket.lane, ticket.account)] += 1

    def cancel(self, ticket: Ticket) -> None:
        """Give a place back (the attempt was throttled, or failed before its hash)."""
        with self._cond:
            self._release(ticket)

    def _release(self, ticket: Ticket) -> None:
        if ticket.done:
            return
        ticket.done = True
        counters: list[tuple[Counter[Any], Any]] = [
            (self._pending, ticket.lane),
            (self._by_source, (ticket.lane, ticket.source)),
            (self._by_account, (ticket.lane, ticket.account)),
        ]
        for counter, key in counters:
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]

    # --- running ---------------------------------------------------------------------------------

    def _enqueue(self, ticket: Ticket, work: Callable[[], T]) -> Future[T]:
        job = _Job(ticket, work)
        with self._cond:
            if self._closed:
                raise RuntimeError("the hashing pool is closed")
            self._queues[ticket.lane].append(job)
            self._cond.notify_all()
        return job.future

    def _next(self, lanes: tuple[str, ...], own: bool) -> _Job | None:
        """The next job of `lanes`, in their order. A shared slot (`own` False) leaves a lane's job
        to a thread of that lane's own that is idle: a newcomer's attempt is hashed at the clean
        thread's priority, not at the shared slot's lowest one."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                for lane in lanes:
                    if self._queues[lane] and (own or not self._idle[lane]):
                        job = self._queues[lane].popleft()
                        if own and self._queues[lane]:
                            self._cond.notify_all()  # busy now: a shared slot may take the rest
                        return job
                if own:
                    self._idle.update(lanes)
                try:
                    self._cond.wait()
                finally:
                    if own:
                        self._idle.subtract(lanes)

    def _serve(self, lanes: tuple[str, ...], nice: int, share: float, own: bool) -> None:
        _lower_priority(nice)
        rest_until = 0.0
        while True:
            # Rest as long as the share asks since this slot's last hash, *before* taking a job:
            # a resting slot holds nothing, so an attempt that arrives meanwhile goes to a thread
            # that is ready (a slot that took it first kept a newcomer waiting out a stranger's rest).
            rest = rest_until - time.monotonic()
            if rest > 0:
                time.sleep(rest)
            job = self._next(lanes, own)
            if job is None:
                return
            if not job.future.set_running_or_notify_cancel():
                self.cancel(job.ticket)
                continue
            with self._cond:
                self.running += 1
                self.peak_running = max(self.peak_running, self.running)
            started = time.monotonic()
            result: Any = None
            failure: BaseException | None = None
            try:
                result = job.work()
            except BaseException as error:  # handed to the waiting caller
                failure = error
            ended = time.monotonic()
            # Strangers' hashes (the `other` lane: what a flood is made of) rest longer (`STRANGER_SHARE`).
            lane_share = share * STRANGER_SHARE if job.ticket.lane == OTHER and share < 1.0 else share
            rest_until = ended + (ended - started) * (1 / lane_share - 1)
            with self._cond:  # counted before the caller hears back
                lane = job.ticket.lane
                self.longest_wait[lane] = max(self.longest_wait.get(lane, 0.0), started - job.queued_at)
                self.longest_hash[lane] = max(self.longest_hash.get(lane, 0.0), ended - started)
                self.running -= 1
                self.done += 1
                self.done_by_lane[job.ticket.lane] += 1
                self._release(job.ticket)
            if failure is not None:
                job.future.set_exception(failure)
            else:
                job.future.set_result(result)

    async def run(self, ticket: Ticket, work: Callable[[], T]) -> T:
        """Run `work` (a hash) in the ticket's lane; its place is given back when it ends."""
        return await asyncio.wrap_future(self._enqueue(ticket, work))

    async def verify_with(self, ticket: Ticket, stored_hash: str | None, password: str) -> bool:
        """Whether `password` matches (`stored_hash` None: an unknown user, verified against a dummy
        hash of the same cost so that the answer takes as long)."""
        return await self.run(ticket, lambda: self.passwords.verify(stored_hash, password))

    def _internal_ticket(self) -> Ticket:
        ticket = Ticket(INTERNAL, "", "")
        with self._cond:
            self._pending[INTERNAL] += 1
            self._by_source[(INTERNAL, "")] += 1
            self._by_account[(INTERNAL, "")] += 1
        return ticket

    async def verify(self, stored_hash: str | None, password: str, *, shed: bool = True) -> bool:
        """`verify_with` in the `other` lane, as an anonymous source (shed=False: the priority lane)."""
        ticket = self.admit(OTHER, "", "") if shed else self._internal_ticket()
        return await self.verify_with(ticket, stored_hash, password)

    async def hash(self, password: str) -> str:
        return await self.run(self._internal_ticket(), lambda: self.passwords.hash(password))

    def hash_blocking(self, password: str) -> str:
        """`hash` for code running in a worker thread (never on the event loop)."""
        return self._enqueue(self._internal_ticket(), lambda: self.passwords.hash(password)).result()

    def verify_blocking(self, stored_hash: str | None, password: str) -> bool:
        work = lambda: self.passwords.verify(stored_hash, password)  # noqa: E731
        return self._enqueue(self._internal_ticket(), work).result()

    def summary(self) -> str:
        """One line per lane used: hashes done and shed, the longest wait and the longest hash."""
        with self._cond:
            lanes = [
                lane for lane in (INTERNAL, *LANES) if self.done_by_lane[lane] or self.shed_by_lane[lane]
            ]
            return "; ".join(
                f"{lane}: {self.done_by_lane[lane]} hashed, {self.shed_by_lane[lane]} shed, longest wait "
                f"{self.longest_wait.get(lane, 0.0):.2f} s, longest hash {self.longest_hash.get(lane, 0.0):.2f} s"
                for lane in lanes
            )

    def close(self) -> None:
        with self._cond:
            self._closed = True
            waiting = [job for queue in self._queues.values() for job in queue.drain()]
            self._cond.notify_all()
        for job in waiting:
            job.future.cancel()
            self.cancel(job.ticket)
