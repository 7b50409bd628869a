"""`--batch`: the generation phase through a provider's batch API (OpenAI Batch, Anthropic Message
Batches, Gemini batch mode).

1. Recover: chunks of earlier sessions (`batch_state`) are picked up: "submitted" ones are polled,
   a "submitting" one is looked up at the provider before anything is sent again
   (`batch_submit`), an "unresolved" one goes on being settled, a "writing" one was never sent.
   Requests in open batches are not asked again.
2. Submit: each remaining (item, sample) is prepared exactly as online (`GenerationPhase.prepare`:
   the same frames, prompt, seed and request); answers already in the response cache and media
   failures are recorded at once; the rest become the provider's lines (composed by the backend's
   own wire code), written to disk and submitted in chunks within the provider's limits and the
   room left in its batch queue (OpenAI's enqueued tokens: `models.batch.limits`). With a budget,
   a request goes into a chunk only if its upper bound (`bounds`) at the batch price fits; what does
   not fit waits for the open batches' results to give room back, and is submitted then.
3. Collect (unless `wait` is off): open batches are polled every `poll_interval_s`; an ended batch's
   results are parsed by the backend's own parser and appended to `predictions.jsonl` as online
   answers are (marked with the batch, priced at the batch discount, stored in the response cache).
   A request the batch did not answer (expired, cancelled, the batch failed validation, a server
   error, an answer that is not one) is asked again online or in a new batch (`retry`); a request
   the provider refused for itself (a 4xx) is recorded as that failure. A batch refused for the
   provider's queue limit ran nothing: its requests wait for room and are submitted again (or go
   online when `on_queue_limit=online` says so).

Killing the process at any moment loses nothing and pays for nothing twice: the provider keeps the
batches, the run directory keeps their ids and the intent of every create, and the same command
(from any process or machine) continues.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from expvid.models.batch import BatchAdapter, BatchAPIError
from expvid.models.batch.limits import chunk_limits, queue_limit
from expvid.models.pricing import BATCH_DISCOUNT
from expvid.models.types import BackendError
from expvid.run.batch_merge import merge_chunk
from expvid.run.batch_settings import BatchSettings
from expvid.run.batch_state import (
    BatchedRequest,
    BatchOutcome,
    BatchStore,
    ChunkRecord,
    ChunkWriter,
    custom_id,
)
from expvid.run.batch_submit import ChunkCreator, CreateOutcome
from expvid.run.bounds import Bound, Bounder
from expvid.run.budget import BudgetGate
from expvid.run.generate import GenerationPhase, PreparedItem
from expvid.run.rundir import AppendLog, RunDir
from expvid.schema import ErrorKind, Item, Prediction
from expvid.schema.records import utc_now

Key = tuple[str, int]


@dataclass
class Waiting:
    """A request to submit: its item and sample, the batch round, and why it is not sent yet."""

    item: Item
    sample: int
    round: int = 1
    #: "" (not tried yet), "budget" (its bound did not fit), "queue" (no room in the provider's queue).
    held_by: str = ""
    bound: Bound | None = None


def run_uid(out: str, created_at: str) -> str:
    """A stable label of one run directory (batch labels), from where and when it was made."""
    return hashlib.sha256(f"{out}\x00{created_at}".encode()).hexdigest()[:16]


class BatchPhase:
    def __init__(
        self,
        *,
        generation: GenerationPhase,
        adapter: BatchAdapter,
        rundir: RunDir,
        log: AppendLog,
        settings: BatchSettings,
        run_uid: str,
        items: Sequence[Item],
        budget: BudgetGate | None = None,
        bounds: Bounder | None = None,
        console: Console | None = None,
        on_done: Callable[[Prediction], None] | None = None,
    ) -> None:
        self.generation = generation
        self.adapter = adapter
        self.rundir = rundir
        self.store = BatchStore(rundir.root)
        self.log = log
        self.settings = settings
        self.run_uid = run_uid
        self.items = {item.id: item for item in items}
        self.budget = budget
        self.bounds = bounds
        self.console = console
        self.on_done = on_done
        self.outcome = BatchOutcome()
        self.limits = chunk_limits(adapter.provider, settings.max_requests, settings.max_bytes)
        model = str(getattr(adapter.backend, "model", ""))
        #: Enqueued prompt tokens the provider's queue holds for this model (None: not known yet).
        self.queue_tokens = queue_limit(adapter.provider, model, settings.tier, settings.queue_tokens)
        self.creator = ChunkCreator(adapter, self.store, settings, self.say, self.outcome.notes)
        #: Budget held per open request (custom_id), given back with the real cost on merge.
        self._held: dict[str, Bound] = {}
        self._open: list[ChunkRecord] = []
        #: The provider refused a chunk for its queue while none of ours was open: others fill it.
        self._queue_full = False

    # -- the phase -------------------------------------------------------------------------------

    async def run(self, todo: Sequence[tuple[Item, int]]) -> BatchOutcome:
        waiting = await self._recover()
        work = [Waiting(item, sample) for item, sample in todo if (item.id, sample) not in waiting]
        if len(work) < len(todo):
            self.say(f"{len(todo) - len(work)} request(s) are already waiting in {len(self._open)} batch(es)")
        while True:
            work = await self._submit(work) if work else []
            if not self._open:
                if work and self._queue_full and self.settings.wait and not self._budget_held(work):
                    self.say(
                        f"the provider's batch queue is full; trying again in {self.settings.queue_wait_s:g} s"
                    )
                    await asyncio.sleep(self.settings.queue_wait_s)
                    self._queue_full = False
                    continue
                break
            until_any = bool(work) and self.settings.wait
            again, online = await self._collect(once=not self.settings.wait, until_any=until_any)
            work += again
            if online:
                await self._online(online)
            if not self.settings.wait:
                break
        await self._leave(work)
        self.outcome.pending += sum(chunk.n_requests for chunk in self._open)
        return self.outcome

    def _budget_held(self, work: Sequence[Waiting]) -> bool:
        return any(entry.held_by == "budget" for entry in work)

    async def _leave(self, work: Sequence[Waiting]) -> None:
        """What is left unsubmitted when the phase returns: waiting for the open batches (a later run
        submits it), or stopped by the budget once nothing open can give room back."""
        if not work:
            return
        budget_held = [entry for entry in work if entry.held_by == "budget"]
        if budget_held and not self._open and self.budget is not None:
            smallest = min(
                (entry.bound for entry in budget_held if entry.bound is not None), key=_usd, default=None
            )
            if smallest is not None:
                await self.budget.halt(smallest)
            self.outcome.not_sent += len(budget_held)
            work = [entry for entry in work if entry.held_by != "budget"]
        if work:
            self.outcome.pending += len(work)
            self.say(
                f"{len(work)} request(s) not submitted yet (waiting for room in the provider's queue or the "
                "budget); the same command submits them"
            )

    def say(self, text: str) -> None:
        if self.console is not None:
            self.console.print(f"[cyan]batch[/]: {escape(text)}")

    # -- 1. recover ------------------------------------------------------------------------------

    async def _recover(self) -> set[Key]:
        waiting: set[Key] = set()
        for chunk in self.store.chunks():
            if chunk.state == "writing":
                chunk.state = "abandoned"
                chunk.failure = "interrupted before it was sent; its requests are asked again"
                self.store.save(chunk)
                self.store.drop_input(chunk)
                continue
            if chunk.state == "submitting":
                created = await self.creator.recover(chunk)
                if created.state in ("abandoned", "refused"):
                    self._abandoned(chunk, created)
                    continue
            if chunk.state not in ("submitted", "unresolved"):
                continue
            self._open.append(chunk)
            if chunk.state == "submitted":
                self.store.drop_input(chunk)
            requests = self.store.requests(chunk)
            n = max(1, chunk.n_requests)
            share = Bound(
                None if chunk.estimated_usd is None else chunk.estimated_usd / n,
                chunk.estimated_tokens // n,
                chunk.prompt_tokens // n,
            )
            for cid, request in requests.items():
                waiting.add((request.draft.item_id, request.draft.sample))
                if self.budget is not None:
                    self._held[cid] = await self.budget.hold(share)
        return waiting

    def _abandoned(self, chunk: ChunkRecord, created: CreateOutcome) -> None:
        if created.state == "refused":
            chunk.state, chunk.failure = (
                "abandoned",
                f"refused for the provider's queue limit: {created.message}",
            )
            self.store.save(chunk)
            self.store.drop_input(chunk)
        self.outcome.notes.append(
            f"chunk {chunk.local_id} was not created ({chunk.failure}); its requests are asked again"
        )

    # -- 2. submit -------------------------------------------------------------------------------

    async def _submit(self, work: Sequence[Waiting]) -> list[Waiting]:
        """Submit what fits; returns what has to wait (for the budget, or room in the queue)."""
        writer: ChunkWriter | None = None
        lock = asyncio.Lock()
        slots = asyncio.Semaphore(8)
        left: list[Waiting] = []
        enqueued = sum(chunk.prompt_tokens for chunk in self._open)

        async def add(entry: Waiting) -> None:
            nonlocal writer, enqueued
            async with slots:
                if self.budget is not None and self.budget.stopped:
                    self.outcome.not_sent += 1
                    return
                prepared = await self.generation.prepare(entry.item, entry.sample)
                if isinstance(prepared, Prediction):
                    self.record(prepared)  # a media failure, as online
                    return
                if await self._from_cache(prepared):
                    return
                cid = custom_id(entry.item.id, entry.sample)
                try:
                    line, sent = self.adapter.line(cid, prepared.request)
                except BackendError as error:
                    self.record(
                        prepared.draft.failure(str(error), error.kind, sent=error.sent, status=error.status)
                    )
                    return
                encoded = ChunkWriter.encode(line)
                request = BatchedRequest(
                    custom_id=cid,
                    draft=prepared.draft,
                    sent=sent,
                    request_hash=self.adapter.request_hash(prepared.request),
                )
                bound = self._bound(prepared)
                async with lock:
                    if not self._queue_room(bound, enqueued, writer):
                        left.append(Waiting(entry.item, entry.sample, entry.round, "queue", bound))
                        return
                    held = await self._admit(bound)
                    if held is None:
                        left.append(Waiting(entry.item, entry.sample, entry.round, "budget", bound))
                        return
                    if writer is not None and not self._fits(writer, len(encoded), bound):
                        enqueued += writer.record.prompt_tokens
                        left.extend(await self._send(writer))
                        writer = None
                    if writer is None:
                        writer = ChunkWriter(self.store, self._new_chunk(entry.round))
                    writer.add(encoded, request)
                    record = writer.record
                    record.estimated_tokens += held.tokens
                    record.prompt_tokens += held.prompt_tokens
                    if held.usd is not None:
                        record.estimated_usd = (record.estimated_usd or 0.0) + held.usd
                    self._held[cid] = held

        await asyncio.gather(*(add(entry) for entry in work))
        if writer is not None:
            left.extend(await self._send(writer))
        return left

    def _bound(self, prepared: PreparedItem) -> Bound:
        bound = self.bounds.bound(prepared.request) if self.bounds is not None else Bound(None, 0)
        return bound.scaled(BATCH_DISCOUNT)

    def _queue_room(self, bound: Bound, enqueued: int, writer: ChunkWriter | None) -> bool:
        """Whether the provider's queue has room for one more request's prompt (OpenAI's enqueued
        tokens); a request alone always goes when nothing of the run is queued."""
        if self.queue_tokens is None:
            return True
        queued = enqueued + (writer.record.prompt_tokens if writer is not None else 0)
        return queued == 0 or queued + bound.prompt_tokens <= self.queue_tokens

    async def _admit(self, bound: Bound) -> Bound | None:
        """Hold the request's bound at the batch price (None: it does not fit now)."""
        if self.budget is None:
            return bound
        return await self.budget.try_reserve(bound)

    def _new_chunk(self, round_: int) -> ChunkRecord:
        return self.store.new_chunk(
            run_uid=self.run_uid,
            provider=self.adapter.provider,
            endpoint=self.adapter.endpoint,
            model=str(self.generation.backend.name),
            round_=round_,
        )

    def _fits(self, writer: ChunkWriter, size: int, bound: Bound) -> bool:
        record = writer.record
        return record.n_requests < self.limits.max_requests and record.n_bytes + size <= self.limits.max_bytes

    async def _from_cache(self, prepared: PreparedItem) -> bool:
        cache = self.adapter.cache
        if cache is None:
            return False
        hit = await cache.aget(self.adapter.request_hash(prepared.request))
        if hit is None:
            return False
        self.outcome.from_cache += 1
        self.record(prepared.draft.answer(hit))
        return True

    async def _send(self, writer: ChunkWriter) -> list[Waiting]:
        """Create the chunk's batch; returns its requests when the provider refused it for its queue
        (a 429 on create: nothing was created), to be submitted again once there is room."""
        writer.close()
        chunk = writer.record
        created = await self.creator.create(chunk)
        if created.state == "submitted":
            assert chunk.handle is not None
            self.store.drop_input(chunk)
            self._open.append(chunk)
            self.outcome.submitted += chunk.n_requests
            self.say(
                f"submitted {chunk.n_requests} request(s) ({chunk.n_bytes / 1e6:.1f} MB) as {chunk.handle.batch_id}"
            )
            return []
        if created.state == "unresolved":
            self._open.append(chunk)  # settled while collecting; its requests wait
            return []
        if created.state == "refused":
            return await self._refused_at_create(chunk, created.message)
        self.outcome.unsubmitted += chunk.n_requests
        self.outcome.notes.append(
            f"{chunk.n_requests} request(s) could not be submitted ({chunk.failure}); re-run to try again"
        )
        for cid in self.store.requests(chunk):
            await self.release(cid)
        return []

    async def _refused_at_create(self, chunk: ChunkRecord, message: str) -> list[Waiting]:
        """A create the provider refused for its queue (a 429): nothing was created; the requests
        wait for room (or go online when `on_queue_limit=online` says so)."""
        chunk.state, chunk.failure = "abandoned", f"refused for the provider's queue limit: {message}"
        self.store.save(chunk)
        self.store.drop_input(chunk)
        self.outcome.queue_refusals += 1
        self._queue_full = not self._open
        self.say(f"{chunk.local_id}: refused for the provider's queue limit ({message}); it waits for room")
        again = []
        for cid, request in self.store.requests(chunk).items():
            await self.release(cid)
            item = self.items.get(request.draft.item_id)
            if item is not None:
                again.append(Waiting(item, request.draft.sample, chunk.round, "queue"))
        if self.settings.on_queue_limit == "online":
            await self._online([(entry.item, entry.sample) for entry in again])
            return []
        return again

    # -- 3. collect ------------------------------------------------------------------------------

    async def _collect(self, *, once: bool, until_any: bool) -> tuple[list[Waiting], list[tuple[Item, int]]]:
        """Poll the open batches until all have ended (or one has, `until_any`; or one sweep, `once`),
        merging each ended one. Returns what to submit again and what to ask online."""
        again: list[Waiting] = []
        online: list[tuple[Item, int]] = []
        while self._open:
            ended = 0
            for chunk in list(self._open):
                if chunk.state == "unresolved":
                    ended += await self._settle(chunk, again)
                    continue
                assert chunk.handle is not None
                try:
                    state = await self.adapter.api.poll(chunk.handle)
                except BatchAPIError as error:
                    self.say(f"could not poll {chunk.handle.batch_id}: {error}")
                    continue
                if state.status != chunk.status:
                    done = state.counts.get("completed", state.counts.get("succeeded", 0))
                    self.say(f"{state.batch_id}: {state.status} ({done} of {chunk.n_requests} answered)")
                chunk.status, chunk.counts, chunk.failure = state.status, state.counts, state.failure
                self.store.save(chunk)
                if not state.ended:
                    continue
                if state.queue_refusal is not None:
                    ended += 1
                    await self._refused(chunk, state.queue_refusal, state.queue_limit_tokens, again, online)
                    continue
                chunk.ended_at = utc_now()
                try:
                    merged = await merge_chunk(self, chunk)
                except BatchAPIError as error:  # results not readable yet: the next poll tries again
                    self.say(f"could not fetch the results of {state.batch_id}: {error}")
                    continue
                ended += 1
                self._open.remove(chunk)
                for key, action in merged:
                    item = self.items.get(key[0])
                    if item is None:
                        continue
                    if action == "batch":
                        self.outcome.retried_in_batch += 1
                        again.append(Waiting(item, key[1], chunk.round + 1))
                    else:
                        online.append((item, key[1]))
            if once or not self._open or (until_any and ended):
                break
            await asyncio.sleep(self.settings.poll_interval_s)
        return again, online

    async def _settle(self, chunk: ChunkRecord, again: list[Waiting]) -> int:
        """Go on settling an "unresolved" chunk; 1 when it left that state."""
        created = await (self.creator.settle(chunk) if chunk.candidates else self.creator.recover(chunk))
        if created.state == "unresolved":
            return 0
        if created.state == "submitted":
            self.store.drop_input(chunk)
            return 1
        self._open.remove(chunk)
        for cid, request in self.store.requests(chunk).items():
            await self.release(cid)
            item = self.items.get(request.draft.item_id)
            if item is not None:
                again.append(Waiting(item, request.draft.sample, chunk.round))
        return 1

    async def _refused(
        self,
        chunk: ChunkRecord,
        refusal: str,
        limit: int | None,
        again: list[Waiting],
        online: list[tuple[Item, int]],
    ) -> None:
        """A chunk the provider refused for its queue limit: nothing ran, nothing is billed. Its
        requests wait for room (or go online when asked), sized by the limit the refusal states."""
        self._open.remove(chunk)
        self.outcome.queue_refusals += 1
        chunk.state, chunk.failure = "abandoned", f"refused for the provider's queue limit: {refusal}"
        chunk.ended_at = utc_now()
        self.store.save(chunk)
        if chunk.handle is not None:
            await self.adapter.api.cleanup(chunk.handle)
        if limit is not None:
            self.queue_tokens = limit if self.queue_tokens is None else min(self.queue_tokens, limit)
        self._queue_full = not self._open and (limit is None or chunk.prompt_tokens <= limit)
        to_online = self.settings.on_queue_limit == "online"
        self.say(
            f"{chunk.handle.batch_id if chunk.handle else chunk.local_id}: refused for the provider's queue limit "
            f"({refusal}); its {chunk.n_requests} request(s) "
            + ("go online (on_queue_limit=online)" if to_online else "wait for room and are submitted again")
        )
        too_large = limit is not None and chunk.n_requests == 1 and chunk.prompt_tokens > limit
        for cid, request in self.store.requests(chunk).items():
            await self.release(cid)
            item = self.items.get(request.draft.item_id)
            if item is None:
                continue
            if to_online:
                online.append((item, request.draft.sample))
            elif too_large:  # alone and over the limit: no room will ever come
                self.outcome.recorded_failures += 1
                self.record(
                    request.draft.failure(
                        f"its prompt (up to {chunk.prompt_tokens} tokens) is larger than the provider's batch "
                        f"queue limit ({limit} enqueued tokens); ask it online (on_queue_limit=online)",
                        ErrorKind.REQUEST,
                        sent=request.sent,
                        extra_meta={"batch_error": "queue_limit"},
                    )
                )
            else:
                again.append(Waiting(item, request.draft.sample, chunk.round, "queue"))

    async def _online(self, work: list[tuple[Item, int]]) -> None:
        self.outcome.retried_online += len(work)
        self.say(f"asking {len(work)} request(s) again online (at the standard price)")
        before = self.generation.not_sent
        await self.generation.run(work)
        self.outcome.not_sent += self.generation.not_sent - before

    def record(self, prediction: Prediction) -> None:
        self.log.append(prediction)
        if self.on_done is not None:
            self.on_done(prediction)

    async def settle_usage(self, cid: str, usage: object) -> None:
        held = self._held.pop(cid, None)
        if held is not None and self.budget is not None:
            await self.budget.settle_usage(held, usage, discount=BATCH_DISCOUNT)  # type: ignore[arg-type]

    async def release(self, cid: str) -> None:
        held = self._held.pop(cid, None)
        if held is not None and self.budget is not None:
            await self.budget.release(held)


def _usd(entry: Bound) -> float:
    return entry.usd if entry.usd is not None else float(entry.tokens)
