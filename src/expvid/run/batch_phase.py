"""`--batch`: the generation phase through a provider's batch API (OpenAI Batch, Anthropic Message Batches).

1. Recover: chunks of earlier sessions (`batch_state`) are picked up: "submitted" ones are polled,
   a "submitting" one is looked up at the provider by its metadata before anything is sent again,
   a "writing" one was never sent. Requests in open batches are not asked again.
2. Submit: each remaining (item, sample) is prepared exactly as online (`GenerationPhase.prepare`:
   the same frames, prompt, seed and request); answers already in the response cache and media
   failures are recorded at once; the rest become the provider's JSONL lines (composed by the
   backend's own wire code), written to disk and submitted in chunks within the provider's limits.
   With a budget, each request is admitted at its expected cost at the batch price.
3. Collect (unless `wait` is off): open batches are polled every `poll_interval_s`; an ended batch's
   results are parsed by the backend's own parser and appended to `predictions.jsonl` as online
   answers are (marked with the batch, priced at the batch discount, stored in the response cache).
   A request the batch did not answer (expired, cancelled, the batch failed validation, a server
   error, an answer that is not one) is asked again online or in a new batch (`retry`); a request
   the provider refused for itself (a 4xx) is recorded as that failure. Every per-request error
   is kept in the chunk's record.

Killing the process at any moment loses nothing: the provider keeps the batches, the run directory
keeps their ids, and the same command (from any process or machine) continues.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape

from expvid.models.batch import BatchAdapter, RequestError
from expvid.models.batch.limits import chunk_limits
from expvid.models.batch.openai_batch import BatchAPIError
from expvid.models.pricing import BATCH_DISCOUNT
from expvid.models.retry import AttemptFailure
from expvid.models.types import BackendError
from expvid.run.batch_settings import BatchSettings
from expvid.run.batch_state import (
    BatchedRequest,
    BatchStore,
    ChunkRecord,
    ChunkWriter,
    RequestErrorRecord,
    custom_id,
)
from expvid.run.budget import BudgetExhausted, BudgetGate, Expectation
from expvid.run.generate import GenerationPhase, PreparedItem
from expvid.run.rundir import AppendLog, RunDir
from expvid.schema import ErrorKind, Item, Prediction
from expvid.schema.records import utc_now

Key = tuple[str, int]


@dataclass
class BatchOutcome:
    submitted: int = 0
    merged: int = 0
    #: Requests still waiting in provider batches when the phase returned (wait off).
    pending: int = 0
    retried_online: int = 0
    retried_in_batch: int = 0
    recorded_failures: int = 0
    from_cache: int = 0
    not_sent: int = 0
    #: Requests that could not be submitted (the batch API refused the chunk); asked on a re-run.
    unsubmitted: int = 0
    notes: list[str] = field(default_factory=list)


def run_uid(out: str, created_at: str) -> str:
    """A stable label of one run directory (OpenAI batch metadata), from where and when it was made."""
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
        expect: Callable[[Any], Expectation] | None = None,
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
        self.expect = expect
        self.console = console
        self.on_done = on_done
        self.outcome = BatchOutcome()
        self.limits = chunk_limits(adapter.provider, settings.max_requests, settings.max_bytes)
        #: Budget held per open request (custom_id), given back with the real cost on merge.
        self._held: dict[str, Expectation] = {}
        self._open: list[ChunkRecord] = []

    # -- the phase -------------------------------------------------------------------------------

    async def run(self, todo: Sequence[tuple[Item, int]]) -> BatchOutcome:
        waiting = await self._recover()
        pairs = [(item, sample) for item, sample in todo if (item.id, sample) not in waiting]
        if len(pairs) < len(todo):
            self._say(
                f"{len(todo) - len(pairs)} request(s) are already waiting in {len(self._open)} batch(es)"
            )
        await self._submit(pairs, round_=1)
        retry = await self._collect(once=not self.settings.wait)
        while retry:
            by_round = max(round_ for _, round_ in retry)
            keys = [key for key, _ in retry]
            work = [(self.items[item_id], sample) for item_id, sample in keys if item_id in self.items]
            if self.settings.retry == "batch" and by_round < self.settings.max_rounds:
                self.outcome.retried_in_batch += len(work)
                await self._submit(work, round_=by_round + 1)
                retry = await self._collect(once=not self.settings.wait)
                continue
            self.outcome.retried_online += len(work)
            self._say(f"asking {len(work)} request(s) again online (at the standard price)")
            await self.generation.run(work)
            self.outcome.not_sent += self.generation.not_sent
            break
        self.outcome.pending = sum(chunk.n_requests for chunk in self._open)
        return self.outcome

    def _say(self, text: str) -> None:
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
                handle = None
                try:
                    handle = await self.adapter.api.find(chunk.metadata())
                except BatchAPIError as error:
                    self._say(f"could not look up {chunk.local_id} at the provider: {error}")
                if handle is None:
                    chunk.state = "abandoned"
                    chunk.failure = (
                        "interrupted while being submitted and not found at the provider; asked again"
                    )
                    self.outcome.notes.append(
                        f"chunk {chunk.local_id} may have reached {chunk.provider} before the run stopped; its "
                        "requests were submitted again (at most that chunk may be paid twice)"
                    )
                    self.store.save(chunk)
                    self.store.drop_input(chunk)
                    continue
                chunk.handle, chunk.state, chunk.submitted_at = handle, "submitted", utc_now()
                self.store.save(chunk)
                self.store.drop_input(chunk)
            if chunk.state != "submitted":
                continue
            self._open.append(chunk)
            requests = self.store.requests(chunk)
            share = Expectation(
                None if chunk.estimated_usd is None else chunk.estimated_usd / max(1, chunk.n_requests),
                chunk.estimated_tokens // max(1, chunk.n_requests),
            )
            for cid, request in requests.items():
                waiting.add((request.draft.item_id, request.draft.sample))
                if self.budget is not None:
                    self._held[cid] = await self.budget.hold(share)
        return waiting

    # -- 2. submit -------------------------------------------------------------------------------

    async def _submit(self, pairs: Sequence[tuple[Item, int]], *, round_: int) -> None:
        if not pairs:
            return
        writer: ChunkWriter | None = None
        lock = asyncio.Lock()
        slots = asyncio.Semaphore(8)

        async def add(item: Item, sample: int) -> None:
            nonlocal writer
            async with slots:
                if self.budget is not None and self.budget.stopped:
                    self.outcome.not_sent += 1
                    return
                prepared = await self.generation.prepare(item, sample)
                if isinstance(prepared, Prediction):
                    self._record(prepared)  # a media failure, as online
                    return
                if await self._from_cache(prepared):
                    return
                cid = custom_id(item.id, sample)
                try:
                    line, sent = self.adapter.line(cid, prepared.request)
                except BackendError as error:
                    self._record(
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
                expected = await self._admit(prepared)
                if expected is None:
                    return
                async with lock:
                    if writer is not None and not self._fits(writer, len(encoded)):
                        await self._send(writer)
                        writer = None
                    if writer is None:
                        writer = ChunkWriter(self.store, self._new_chunk(round_))
                    writer.add(encoded, request)
                    record = writer.record
                    record.estimated_tokens += expected.tokens
                    if expected.usd is not None:
                        record.estimated_usd = (record.estimated_usd or 0.0) + expected.usd
                    self._held[cid] = expected

        await asyncio.gather(*(add(item, sample) for item, sample in pairs))
        if writer is not None:
            await self._send(writer)

    def _new_chunk(self, round_: int) -> ChunkRecord:
        return self.store.new_chunk(
            run_uid=self.run_uid,
            provider=self.adapter.provider,
            endpoint=self.adapter.endpoint,
            model=str(self.generation.backend.name),
            round_=round_,
        )

    def _fits(self, writer: ChunkWriter, size: int) -> bool:
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
        self._record(prepared.draft.answer(hit))
        return True

    async def _admit(self, prepared: PreparedItem) -> Expectation | None:
        """The request's expected cost at the batch price, held against the budget (None: no room)."""
        guess = self.expect(prepared.request) if self.expect is not None else Expectation(None, 0)
        discounted = Expectation(None if guess.usd is None else guess.usd * BATCH_DISCOUNT, guess.tokens)
        if self.budget is None:
            return discounted
        try:
            return await self.budget.reserve(discounted, probe_first=False)
        except BudgetExhausted:
            self.outcome.not_sent += 1
            return None

    async def _send(self, writer: ChunkWriter) -> None:
        writer.close()
        chunk = writer.record
        chunk.state = "submitting"
        self.store.save(chunk)
        try:
            handle = await self.adapter.api.submit(self.store.input_path(chunk), metadata=chunk.metadata())
        except BatchAPIError as error:
            chunk.state, chunk.failure = "abandoned", f"not submitted: {error}"
            self.store.save(chunk)
            self.store.drop_input(chunk)
            self.outcome.unsubmitted += chunk.n_requests
            self.outcome.notes.append(
                f"{chunk.n_requests} request(s) could not be submitted ({error}); re-run to try again"
            )
            for cid in self.store.requests(chunk):
                held = self._held.pop(cid, None)
                if held is not None and self.budget is not None:
                    await self.budget.release(held)
            return
        chunk.handle, chunk.state, chunk.submitted_at = handle, "submitted", utc_now()
        self.store.save(chunk)
        self.store.drop_input(chunk)
        self._open.append(chunk)
        self.outcome.submitted += chunk.n_requests
        self._say(
            f"submitted {chunk.n_requests} request(s) ({chunk.n_bytes / 1e6:.1f} MB) as {handle.batch_id}"
        )

    # -- 3. collect ------------------------------------------------------------------------------

    async def _collect(self, *, once: bool) -> list[tuple[Key, int]]:
        """Poll the open batches (until all have ended, or one sweep), merging each ended one.
        Returns the requests to ask again, with the round of the batch they came from."""
        retry: list[tuple[Key, int]] = []
        while self._open:
            for chunk in list(self._open):
                assert chunk.handle is not None
                try:
                    state = await self.adapter.api.poll(chunk.handle)
                except BatchAPIError as error:
                    self._say(f"could not poll {chunk.handle.batch_id}: {error}")
                    continue
                if state.status != chunk.status:
                    done = state.counts.get("completed", state.counts.get("succeeded", 0))
                    self._say(f"{state.batch_id}: {state.status} ({done} of {chunk.n_requests} answered)")
                chunk.status, chunk.counts, chunk.failure = state.status, state.counts, state.failure
                self.store.save(chunk)
                if state.ended:
                    chunk.ended_at = utc_now()
                    try:
                        merged = await self._merge(chunk)
                    except BatchAPIError as error:  # results not readable yet: the next poll tries again
                        self._say(f"could not fetch the results of {state.batch_id}: {error}")
                        continue
                    retry.extend((key, chunk.round) for key in merged)
                    self._open.remove(chunk)
            if once or not self._open:
                break
            await asyncio.sleep(self.settings.poll_interval_s)
        return retry

    async def _merge(self, chunk: ChunkRecord) -> list[Key]:
        assert chunk.handle is not None
        batch_id = chunk.handle.batch_id
        requests = self.store.requests(chunk)
        results = await self.adapter.api.results(chunk.handle, list(requests))
        done = self.rundir.predictions()
        retry: list[Key] = []
        for result in results:
            request = requests.get(result.custom_id)
            if request is None:
                continue  # a line the run did not send (never expected)
            draft = request.draft
            key = (draft.item_id, draft.sample)
            known = done.get(key)
            if known is not None and known.ok and known.meta.get("batch_id") == batch_id:
                continue  # merged by an earlier session that stopped before recording it
            error = result.error
            if result.body is not None:
                try:
                    response = self.adapter.parse(result.body)
                except AttemptFailure as failure:
                    error = RequestError(
                        kind="malformed", message=failure.message, retryable=failure.retryable
                    )
                except ValueError as failure:  # a body the SDK's model refuses (pydantic)
                    error = RequestError(kind="malformed", message=str(failure)[:300], retryable=True)
                else:
                    response = response.model_copy(
                        update={"sent": request.sent, "request_hash": request.request_hash, "cached": False}
                    )
                    if self.adapter.cache is not None and request.request_hash:
                        await self.adapter.cache.aput(request.request_hash, response)
                    await self._settle(result.custom_id, response.usage)
                    self._record(draft.answer(response, batch={"provider": chunk.provider, "id": batch_id}))
                    self.outcome.merged += 1
                    continue
            error = error or RequestError(kind="missing", message="no answer and no error")
            await self._release(result.custom_id)
            action = self._action(error, chunk.round)
            chunk.errors.append(
                RequestErrorRecord(
                    custom_id=result.custom_id,
                    item_id=draft.item_id,
                    sample=draft.sample,
                    kind=error.kind,
                    message=error.message,
                    action=action,
                )
            )
            if action == "recorded":
                self.outcome.recorded_failures += 1
                self._record(
                    draft.failure(
                        f"batch {batch_id}: {error.message}",
                        ErrorKind.REQUEST,
                        sent=request.sent,
                        status=error.status,
                        extra_meta={"batch_id": batch_id, "batch_error": error.kind},
                    )
                )
            else:
                retry.append(key)
        chunk.state, chunk.merged_at = "merged", utc_now()
        self.store.save(chunk)
        await self.adapter.api.cleanup(chunk.handle)
        if chunk.errors:
            kinds: dict[str, int] = {}
            for entry in chunk.errors:
                kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
            shown = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
            self._say(f"{batch_id}: {len(chunk.errors)} request(s) without an answer ({shown})")
        return retry

    def _action(self, error: RequestError, round_: int) -> str:
        if not error.retryable:
            return "recorded"
        if self.settings.retry == "batch" and round_ < self.settings.max_rounds:
            return "batch"
        return "online"

    def _record(self, prediction: Prediction) -> None:
        self.log.append(prediction)
        if self.on_done is not None:
            self.on_done(prediction)

    async def _settle(self, cid: str, usage: Any) -> None:
        held = self._held.pop(cid, None)
        if held is not None and self.budget is not None:
            await self.budget.settle_usage(held, usage, discount=BATCH_DISCOUNT)

    async def _release(self, cid: str) -> None:
        held = self._held.pop(cid, None)
        if held is not None and self.budget is not None:
            await self.budget.release(held)
