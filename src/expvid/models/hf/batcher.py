"""Micro-batching: many concurrent `generate()` calls become a few batched forward passes.

The runner keeps several items in flight; a local model is fastest when it answers them together.
Requests wait up to `wait_s` for company with the same batch key (same sampling settings, same
image count), a batch is cut at `max_size` requests or before it would exceed `max_cost` images,
and batches run one at a time on ONE worker thread: the GPU does one thing at a time, and CUDA
state stays on the thread that made it. The event loop never blocks, so frame decoding for the next
items overlaps with generation.

A request whose caller was cancelled is dropped before its batch forms; a request that fails
inside a batch fails alone (the batch function returns an exception for it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from expvid.models.types import at_least_one

Req = TypeVar("Req")
Res = TypeVar("Res")

BatchFunction = Callable[[Sequence[Req]], Sequence["Res | BaseException"]]


@dataclass
class _Entry(Generic[Req, Res]):
    request: Req
    key: Hashable
    cost: int
    future: asyncio.Future[Res]
    arrived: float = field(default_factory=time.monotonic)


class MicroBatcher(Generic[Req, Res]):
    def __init__(
        self,
        run_batch: Callable[[Sequence[Req]], Sequence[Res | BaseException]],
        *,
        key: Callable[[Req], Hashable],
        cost: Callable[[Req], int],
        max_size: int,
        max_cost: int | None,
        wait_s: float,
        thread_name: str = "expvid-hf",
    ) -> None:
        self._run_batch = run_batch
        self._key = key
        self._cost = cost
        self.max_size = at_least_one("max_size", max_size)
        self.max_cost = max_cost
        self.wait_s = wait_s
        self._thread_name = thread_name
        self._executor: ThreadPoolExecutor | None = None
        self._queue: list[_Entry[Req, Res]] = []
        self._wakeup: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.batches = 0
        self.largest_batch = 0
        self.running = 0

    async def submit(self, request: Req) -> Res:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new asyncio.run(): nothing of the old loop can still be pending
            self._loop = loop
            self._queue = []
            self._wakeup = asyncio.Event()
            self._worker = None
        assert self._wakeup is not None
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._thread_name)
        entry: _Entry[Req, Res] = _Entry(
            request, self._key(request), self._cost(request), loop.create_future()
        )
        self._queue.append(entry)
        self._wakeup.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work())
        return await entry.future

    def _compatible(self, key: Hashable) -> list[_Entry[Req, Res]]:
        return [e for e in self._queue if e.key == key and not e.future.done()]

    def _take(self, key: Hashable) -> list[_Entry[Req, Res]]:
        batch: list[_Entry[Req, Res]] = []
        total = 0
        for entry in self._compatible(key):
            if len(batch) >= self.max_size:
                break
            if batch and self.max_cost is not None and total + entry.cost > self.max_cost:
                break
            batch.append(entry)
            total += entry.cost
        taken = {id(e) for e in batch}
        self._queue = [e for e in self._queue if id(e) not in taken and not e.future.done()]
        return batch

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wakeup is not None
        while True:
            self._queue = [e for e in self._queue if not e.future.done()]
            if not self._queue:
                return
            first = self._queue[0]
            deadline = first.arrived + self.wait_s
            while len(self._compatible(first.key)) < self.max_size and not first.future.done():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._wakeup.clear()
                try:
                    await asyncio.wait_for(self._wakeup.wait(), left)
                except TimeoutError:
                    break
            batch = self._take(first.key)
            if not batch:
                continue
            self.batches += 1
            self.largest_batch = max(self.largest_batch, len(batch))
            self.running = len(batch)
            try:
                results = await loop.run_in_executor(
                    self._executor, self._run_batch, [e.request for e in batch]
                )
            except BaseException as error:  # the batch function itself broke: every request learns why
                results = [error] * len(batch)
                if isinstance(error, asyncio.CancelledError):
                    for entry in batch:
                        entry.future.cancel()
                    raise
            finally:
                self.running = 0
            for entry, result in zip(batch, results, strict=True):
                if entry.future.done():
                    continue
                if isinstance(result, BaseException):
                    entry.future.set_exception(result)
                else:
                    entry.future.set_result(result)

    def close(self) -> None:
        """Stop the worker thread (after the batch it is running); a later submit starts a new one."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
