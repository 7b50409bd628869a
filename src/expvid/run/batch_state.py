"""What a batch run keeps in its run directory, so it can be left for hours and resumed anywhere.

    RUN_DIR/batches/<chunk>.json             the chunk: provider, batch id, state, counts, errors
    RUN_DIR/batches/<chunk>.drafts.jsonl     custom_id -> the draft of each request's prediction
    RUN_DIR/batches/<chunk>.input.jsonl      the provider's JSONL while it is being written and sent

A chunk goes "writing" (lines being written) -> "submitting" (the intent: its content hash, the
attempt and the time are on disk BEFORE the create call; an OpenAI upload's file id is recorded
before the batch is created from it) -> "submitted" (the provider has it: its id is recorded) ->
"merged" (every result is in `predictions.jsonl` or was sent on to be asked again). A chunk found
"writing" after a crash was never sent: its requests are simply asked again. One found
"submitting" may or may not have reached the provider: it is looked up there (`batch_submit`) before
anything is sent again; while a lookup cannot settle it, it is "unresolved" (its candidates are
recorded) and its requests are not asked elsewhere. The input file is deleted once the batch
exists (it holds every frame; the provider has its copy).

custom_ids are derived from each request's identity (item id, sample), never from its position, and
fit Anthropic's `^[a-zA-Z0-9_-]{1,64}$`.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from expvid.models.batch import BatchHandle, BatchLabel
from expvid.run.generate import PredictionDraft
from expvid.run.rundir import write_atomic
from expvid.schema.records import utc_now

BATCH_DIR = "batches"
ChunkState = Literal["writing", "submitting", "unresolved", "submitted", "merged", "abandoned"]


def custom_id(item_id: str, sample: int) -> str:
    """A provider-safe id for one (item, sample), from its identity alone."""
    digest = hashlib.sha256(f"{item_id}\x00{sample}".encode()).hexdigest()[:40]
    return f"x{digest}-{sample}"


class RequestErrorRecord(BaseModel):
    custom_id: str
    item_id: str
    sample: int
    kind: str
    message: str
    #: What was done about it: "online", "batch" (a new batch) or "recorded" (a final failure).
    action: str


class BatchedRequest(BaseModel):
    """A line of `<chunk>.drafts.jsonl`: one request's draft, what it sends, and its cache key."""

    custom_id: str
    draft: PredictionDraft
    sent: dict[str, Any] = Field(default_factory=dict)
    request_hash: str | None = None


class ChunkRecord(BaseModel):
    """`batches/<local_id>.json`."""

    local_id: str
    run_uid: str
    provider: str
    endpoint: str
    model: str
    state: ChunkState = "writing"
    round: int = 1
    n_requests: int = 0
    n_bytes: int = 0
    handle: BatchHandle | None = None
    #: Upper bound of the chunk's requests at the batch price (the budget holds it until merged;
    #: files written before the bound was used call it the estimate).
    estimated_usd: float | None = None
    estimated_tokens: int = 0
    #: Of the bound, the prompt tokens (what the provider's batch queue counts as enqueued).
    prompt_tokens: int = 0
    #: Create calls made (the attempt number goes into the batch's label).
    attempt: int = 0
    #: When the last create call was about to be made, and what it sent (SHA-256 of the input).
    intent_at: datetime | None = None
    content_sha256: str | None = None
    #: OpenAI: the uploaded input file, recorded before the batch is created from it.
    input_file_id: str | None = None
    #: Batches that may be this chunk's lost creation and are being settled (cancelled or waited
    #: for, then told apart by their custom ids).
    candidates: list[str] = Field(default_factory=list)
    #: Batches that may have been created for this chunk and could not be told apart (said in notes).
    possible_duplicates: list[str] = Field(default_factory=list)
    status: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    failure: str | None = None
    created_at: datetime = Field(default_factory=utc_now)
    submitted_at: datetime | None = None
    ended_at: datetime | None = None
    merged_at: datetime | None = None
    errors: list[RequestErrorRecord] = Field(default_factory=list)

    def label(self) -> BatchLabel:
        """What the provider's batch is labelled with (OpenAI `metadata`, Gemini display name)."""
        return BatchLabel(run_uid=self.run_uid, chunk=self.local_id, attempt=self.attempt or None)


class BatchStore:
    """The chunks of one run directory."""

    def __init__(self, run_root: Path) -> None:
        self.root = run_root / BATCH_DIR

    def new_chunk(
        self, *, run_uid: str, provider: str, endpoint: str, model: str, round_: int
    ) -> ChunkRecord:
        self.root.mkdir(parents=True, exist_ok=True)
        stamp = utc_now().strftime("%Y%m%dT%H%M%S")
        record = ChunkRecord(
            local_id=f"chunk-{stamp}-{uuid.uuid4().hex[:8]}",
            run_uid=run_uid,
            provider=provider,
            endpoint=endpoint,
            model=model,
            round=round_,
        )
        self.save(record)
        return record

    def save(self, record: ChunkRecord) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / f"{record.local_id}.json", record.model_dump_json(indent=1) + "\n")

    def chunks(self) -> list[ChunkRecord]:
        if not self.root.is_dir():
            return []
        records = [
            ChunkRecord.model_validate_json(path.read_text(encoding="utf-8"))
            for path in sorted(self.root.glob("chunk-*.json"))
        ]
        return sorted(records, key=lambda record: (record.created_at, record.local_id))

    def input_path(self, record: ChunkRecord) -> Path:
        return self.root / f"{record.local_id}.input.jsonl"

    def drafts_path(self, record: ChunkRecord) -> Path:
        return self.root / f"{record.local_id}.drafts.jsonl"

    def requests(self, record: ChunkRecord) -> dict[str, BatchedRequest]:
        """custom_id -> the chunk's request (draft, what it sends, cache key)."""
        found: dict[str, BatchedRequest] = {}
        path = self.drafts_path(record)
        if not path.is_file():
            return found
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                entry = BatchedRequest.model_validate_json(raw)
                found[entry.custom_id] = entry
        return found

    def drop_input(self, record: ChunkRecord) -> None:
        self.input_path(record).unlink(missing_ok=True)

    def content_sha256(self, record: ChunkRecord) -> str:
        digest = hashlib.sha256()
        with self.input_path(record).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def known_batch_ids(self) -> set[str]:
        """Every batch id a chunk of this run directory has recorded (never a lost creation)."""
        return {chunk.handle.batch_id for chunk in self.chunks() if chunk.handle is not None}


class ChunkWriter:
    """Writes one chunk's provider lines and drafts to disk, line by line (memory stays flat)."""

    def __init__(self, store: BatchStore, record: ChunkRecord) -> None:
        self.store = store
        self.record = record
        self._lines = store.input_path(record).open("w", encoding="utf-8")
        self._drafts = store.drafts_path(record).open("w", encoding="utf-8")

    @staticmethod
    def encode(line: dict[str, Any]) -> bytes:
        return (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")

    def add(self, encoded: bytes, request: BatchedRequest) -> None:
        """Append one request's provider line (from `encode`) and its draft."""
        self._lines.write(encoded.decode("utf-8"))
        self._drafts.write(request.model_dump_json() + "\n")
        self.record.n_requests += 1
        self.record.n_bytes += len(encoded)

    def close(self) -> None:
        self._lines.close()
        self._drafts.close()


@dataclass
class BatchOutcome:
    submitted: int = 0
    merged: int = 0
    #: Requests still waiting in provider batches when the phase returned (wait off), or for room
    #: in the provider's queue or budget to be submitted by a later run.
    pending: int = 0
    retried_online: int = 0
    retried_in_batch: int = 0
    recorded_failures: int = 0
    from_cache: int = 0
    not_sent: int = 0
    #: Requests that could not be submitted (the batch API refused the chunk); asked on a re-run.
    unsubmitted: int = 0
    #: Chunks the provider refused for its queue limit (nothing ran; their requests went on waiting).
    queue_refusals: int = 0
    notes: list[str] = field(default_factory=list)
