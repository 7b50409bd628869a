"""What a run directory has at its provider's batch API: `expvid batches list RUN` / `cancel RUN`.

From the run's chunk records (`batches/chunk-*.json`) and its manifest (model, endpoint, key
variable): each batch the run created, its status now at the provider (polled), its requests
and their counts, and what its answers have cost so far (the usage of the answers merged from it,
at the run's price and the batch discount); chunks still being settled name their candidates and
possible duplicates. `cancel` cancels every batch of the run that has not ended (what already ran
is billed and is merged by the next `expvid eval`; what had not run is asked again there).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.models.batch import BatchAPIError, BatchHandle
from expvid.models.pricing import Price
from expvid.run.batch_state import BatchStore, ChunkRecord
from expvid.run.cost import BATCH_SENT_KEY, prediction_cost
from expvid.run.rundir import RunDir
from expvid.schema import DataError


@dataclass
class BatchLine:
    chunk: str
    provider: str
    batch_id: str | None
    state: str
    status: str | None
    requests: int
    counts: dict[str, int] = field(default_factory=dict)
    answered: int = 0
    usd: float | None = None
    note: str = ""


def _backend(run: RunDir) -> Any:
    """The run's backend, rebuilt from its manifest (its model, endpoint and key variable)."""
    from expvid.models.batch import batch_adapter
    from expvid.models.factory import create_backend

    manifest = run.read_manifest()
    backend_record = manifest.config.get("backend") or {}
    options: dict[str, Any] = {}
    if backend_record.get("base_url"):
        options["base_url"] = backend_record["base_url"]
    key_env = backend_record.get("api_key_env")
    if key_env and os.environ.get(key_env):
        options["api_key_env"] = key_env
    api = (manifest.config.get("settings") or {}).get("backend_options", {}).get("api")
    if api:
        options["api"] = api
    backend = create_backend(manifest.model, **options)
    batch_adapter(backend)  # a backend without a batch API is refused here
    return backend


def _api(backend: Any) -> Any:
    from expvid.models.batch import batch_adapter

    return batch_adapter(backend).api


def _costs(run: RunDir) -> tuple[dict[str, int], dict[str, float]]:
    """Answers merged from each batch, and what they cost at the run's price (batch discount)."""
    raw = (run.read_manifest().config.get("price")) if run.manifest_path.is_file() else None
    price = Price.model_validate(raw) if isinstance(raw, dict) else None
    answered: dict[str, int] = {}
    usd: dict[str, float] = {}
    if not run.predictions_path.is_file():
        return answered, usd
    for prediction in run.predictions().values():
        batch = prediction.sent.get(BATCH_SENT_KEY)
        if not isinstance(batch, dict) or not prediction.ok:
            continue
        batch_id = str(batch.get("id"))
        answered[batch_id] = answered.get(batch_id, 0) + 1
        if price is not None:
            usd[batch_id] = usd.get(batch_id, 0.0) + prediction_cost(prediction, price)
    return answered, usd


def _chunks(root: Path) -> list[ChunkRecord]:
    run = RunDir(root)
    if not run.manifest_path.is_file():
        raise DataError(f"{root} is not a run directory (no manifest.json)")
    chunks = BatchStore(root).chunks()
    if not chunks:
        raise DataError(f"{root} has no batches (it was not run with --batch)")
    return chunks


async def list_batches(root: Path, *, poll: bool = True) -> list[BatchLine]:
    """Every batch of the run, polled at its provider unless `poll` is off."""
    chunks = _chunks(root)
    run = RunDir(root)
    answered, usd = _costs(run)
    backend = _backend(run) if poll else None
    try:
        return await _lines(chunks, answered, usd, None if backend is None else _api(backend))
    finally:
        if backend is not None:
            await backend.aclose()


async def _lines(
    chunks: list[ChunkRecord], answered: dict[str, int], usd: dict[str, float], api: Any
) -> list[BatchLine]:
    lines = []
    for chunk in chunks:
        handle = chunk.handle
        line = BatchLine(
            chunk=chunk.local_id,
            provider=chunk.provider,
            batch_id=None if handle is None else handle.batch_id,
            state=chunk.state,
            status=chunk.status,
            requests=chunk.n_requests,
            counts=dict(chunk.counts),
        )
        notes = []
        if chunk.candidates:
            notes.append("candidates: " + ", ".join(chunk.candidates))
        if chunk.possible_duplicates:
            notes.append("possible duplicates: " + ", ".join(chunk.possible_duplicates))
        if chunk.failure and chunk.state in ("abandoned", "unresolved"):
            notes.append(chunk.failure)
        if handle is not None:
            line.answered = answered.get(handle.batch_id, 0)
            line.usd = usd.get(handle.batch_id)
            if api is not None and chunk.state != "merged":
                try:
                    state = await api.poll(handle)
                except BatchAPIError as error:
                    notes.append(f"could not poll: {error}")
                else:
                    line.status, line.counts = state.status, state.counts
        line.note = "; ".join(notes)
        lines.append(line)
    return lines


async def cancel_batches(root: Path) -> list[tuple[str, str]]:
    """Cancel every batch of the run that has not ended: (batch id, status after the cancel)."""
    chunks = _chunks(root)
    backend = _backend(RunDir(root))
    try:
        return await _cancel(chunks, _api(backend))
    finally:
        await backend.aclose()


async def _cancel(chunks: list[ChunkRecord], api: Any) -> list[tuple[str, str]]:
    done = []
    for chunk in chunks:
        handles: list[BatchHandle] = []
        if chunk.handle is not None and chunk.state == "submitted":
            handles.append(chunk.handle)
        for batch_id in chunk.candidates:
            handles.append(BatchHandle(provider=chunk.provider, batch_id=batch_id))
        for handle in handles:
            try:
                state = await api.poll(handle)
                if not state.ended:
                    state = await api.cancel(handle)
            except BatchAPIError as error:
                done.append((handle.batch_id, f"not cancelled: {error}"))
                continue
            done.append((handle.batch_id, state.status))
    return done


def batches_markdown(lines: list[BatchLine]) -> str:
    rows = [
        "| chunk | provider | batch | state | status at provider | requests | counts | answered | USD so far | note |",
        "| --- | --- | --- | --- | --- | ---: | --- | ---: | ---: | --- |",
    ]
    for line in lines:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(line.counts.items()) if v) or "-"
        usd = "-" if line.usd is None else f"{line.usd:.4f}"
        rows.append(
            f"| {line.chunk} | {line.provider} | {line.batch_id or '-'} | {line.state} | {line.status or '-'} | "
            f"{line.requests} | {counts} | {line.answered} | {usd} | {line.note} |"
        )
    total = sum(line.usd or 0.0 for line in lines)
    open_requests = sum(
        line.requests for line in lines if line.state in ("submitted", "unresolved", "submitting")
    )
    rows += [
        "",
        f"{len(lines)} batch chunk(s); {open_requests} request(s) not merged yet; ${total:.4f} spent in batches so far",
    ]
    return "\n".join(rows) + "\n"
