"""Merging an ended batch: each result becomes the prediction an online answer would have made.

A result body is parsed by the backend's own parser and appended to `predictions.jsonl` (marked with
the batch, priced at the batch discount, stored in the response cache); its budget bound is settled
with the usage it reports. A request without an answer is recorded as a failure when the provider
refused it for itself (a 4xx), or handed back to be asked again: in a new batch (`retry=batch`,
until `max_rounds`) or online. Every per-request error is kept in the chunk's record.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from expvid.models.batch import BatchAdapter, BatchAPIError, RequestError
from expvid.models.retry import AttemptFailure
from expvid.run.batch_settings import BatchSettings
from expvid.run.batch_state import BatchOutcome, BatchStore, ChunkRecord, RequestErrorRecord
from expvid.run.rundir import RunDir
from expvid.schema import ErrorKind, Prediction
from expvid.schema.records import utc_now

Key = tuple[str, int]


class MergingPhase(Protocol):
    """What merging needs of the batch phase (`batch_phase.BatchPhase`, which calls `merge_chunk`)."""

    adapter: BatchAdapter
    rundir: RunDir
    store: BatchStore
    settings: BatchSettings
    outcome: BatchOutcome

    def record(self, prediction: Prediction) -> None: ...

    def say(self, text: str) -> None: ...

    async def settle_usage(self, cid: str, usage: object) -> None: ...

    async def release(self, cid: str) -> None: ...


async def merge_chunk(phase: MergingPhase, chunk: ChunkRecord) -> list[tuple[Key, str]]:
    """Record an ended chunk's results; returns the requests to ask again with "batch" or "online".

    `BatchAPIError` when its results cannot be read yet (the next poll tries again)."""
    assert chunk.handle is not None
    adapter = phase.adapter
    batch_id = chunk.handle.batch_id
    requests = phase.store.requests(chunk)
    results = await adapter.api.results(chunk.handle, list(requests))
    done = phase.rundir.predictions()
    retry: list[tuple[Key, str]] = []
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
                response = adapter.parse(result.body)
            except AttemptFailure as failure:
                error = RequestError(kind="malformed", message=failure.message, retryable=failure.retryable)
            except ValueError as failure:  # a body the SDK's model refuses (pydantic)
                error = RequestError(kind="malformed", message=str(failure)[:300], retryable=True)
            else:
                response = response.model_copy(
                    update={"sent": request.sent, "request_hash": request.request_hash, "cached": False}
                )
                if adapter.cache is not None and request.request_hash:
                    await adapter.cache.aput(request.request_hash, response)
                await phase.settle_usage(result.custom_id, response.usage)
                phase.record(draft.answer(response, batch={"provider": chunk.provider, "id": batch_id}))
                phase.outcome.merged += 1
                continue
        error = error or RequestError(kind="missing", message="no answer and no error")
        await phase.release(result.custom_id)
        action = _action(phase, error, chunk.round)
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
            phase.outcome.recorded_failures += 1
            phase.record(
                draft.failure(
                    f"batch {batch_id}: {error.message}",
                    ErrorKind.REQUEST,
                    sent=request.sent,
                    status=error.status,
                    extra_meta={"batch_id": batch_id, "batch_error": error.kind},
                )
            )
        else:
            retry.append((key, action))
    chunk.state, chunk.merged_at = "merged", utc_now()
    phase.store.save(chunk)
    with contextlib.suppress(BatchAPIError):  # an input file left behind does not fail the run
        await adapter.api.cleanup(chunk.handle)
    if chunk.errors:
        kinds: dict[str, int] = {}
        for entry in chunk.errors:
            kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
        shown = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        phase.say(f"{batch_id}: {len(chunk.errors)} request(s) without an answer ({shown})")
    return retry


def _action(phase: MergingPhase, error: RequestError, round_: int) -> str:
    if not error.retryable:
        return "recorded"
    if phase.settings.retry == "batch" and round_ < phase.settings.max_rounds:
        return "batch"
    return "online"
