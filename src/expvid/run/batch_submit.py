"""Creating a chunk's batch exactly once, whatever is killed when.

Before a create call the chunk's intent is on disk (`ChunkRecord`: state "submitting", the attempt,
the time, the SHA-256 of what is sent; for OpenAI the uploaded file's id, recorded before the
batch is created from it). After a crash, or a create whose answer was lost, nothing is sent again
until the provider has been asked what exists (`BatchAPI.lookup`):

- OpenAI and Gemini label each batch with the run, the chunk and the attempt (metadata, display
  name): the listing is searched back to the intent's time, however many pages that takes, and a
  batch with the label is the chunk's (a second one with the same label, from a lost answer that
  was in fact created twice, is cancelled and named).
- Anthropic's message batches carry no label. Candidates are the batches created in the window
  after the intent with the chunk's number of requests, other than the run's known batches. A
  candidate that has ended is settled by the custom ids its results name; one still running cannot
  be ruled out, so it is cancelled (`uncertain=cancel`: its unrun requests are never billed) or
  waited for (`uncertain=wait`), and settled by its results once ended. Exactly the chunk's custom
  ids: it is the chunk's batch (its answers are merged, what it did not run is asked again).
  Otherwise it was someone else's, and the note says so.
- Nothing found: the create never happened; the same input is created again (a new attempt).
- A lookup that fails, or a candidate whose results cannot be read, leaves the chunk waiting
  ("unresolved") and its requests are not sent elsewhere; the batch ids that may duplicate the
  chunk are recorded and said (`possible_duplicates`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from expvid.models.batch import BatchAdapter, BatchAPIError, BatchHandle
from expvid.run.batch_settings import BatchSettings
from expvid.run.batch_state import BatchStore, ChunkRecord
from expvid.schema.records import utc_now

#: Create calls per chunk (each after a lookup found nothing) before its requests are asked anew.
MAX_ATTEMPTS = 5


@dataclass
class CreateOutcome:
    """Where a chunk stands after a create or a lookup."""

    #: "submitted" (its batch is known), "unresolved" (candidates being settled, or the lookup
    #: failed: wait), "abandoned" (not created and not creatable: its requests are asked again),
    #: "refused" (the provider refused it for its queue limit: nothing was created).
    state: str
    message: str = ""


@dataclass
class ChunkCreator:
    adapter: BatchAdapter
    store: BatchStore
    settings: BatchSettings
    say: Callable[[str], None]
    notes: list[str] = field(default_factory=list)

    @property
    def provider(self) -> str:
        return self.adapter.provider

    async def create(self, chunk: ChunkRecord) -> CreateOutcome:
        """Write the intent, then create the chunk's batch; a lost answer is looked up at once."""
        api = self.adapter.api
        path = self.store.input_path(chunk)
        if not path.is_file():
            return self._abandon(chunk, "its input file is gone; its requests are asked again")
        if chunk.attempt >= MAX_ATTEMPTS:  # each lookup found nothing: nothing was created
            return self._abandon(chunk, f"{chunk.attempt} create calls failed; its requests are asked again")
        chunk.state = "submitting"
        chunk.attempt += 1
        chunk.intent_at = utc_now()
        chunk.content_sha256 = self.store.content_sha256(chunk)
        self.store.save(chunk)  # the intent, before anything reaches the provider
        try:
            if chunk.input_file_id is None:
                chunk.input_file_id = await api.upload(path)
                self.store.save(chunk)
            handle = await api.create(path, input_file_id=chunk.input_file_id, label=chunk.label())
        except BatchAPIError as error:
            if error.uncertain:
                self.say(f"{chunk.local_id}: the create call's answer was lost ({error}); looking it up")
                return await self.recover(chunk)
            if error.queue_refusal:
                return CreateOutcome("refused", str(error))
            return self._abandon(chunk, f"not submitted: {error}")
        return self._submitted(chunk, handle)

    async def recover(self, chunk: ChunkRecord) -> CreateOutcome:
        """A "submitting" chunk (a crash or a lost answer): find what its create made, if anything."""
        if chunk.intent_at is None:  # written before intents were recorded: its creation time is close
            chunk.intent_at = chunk.created_at
        try:
            lookup = await self.adapter.api.lookup(
                chunk.label(), since=chunk.intent_at, n_requests=chunk.n_requests
            )
        except BatchAPIError as error:
            return self._unresolved(chunk, f"could not list {self.provider}'s batches to find it: {error}")
        known = self.store.known_batch_ids()
        if lookup.found:
            first, *extra = lookup.found
            for duplicate in extra:
                await self._cancel_duplicate(chunk, duplicate)
            self.say(f"{chunk.local_id}: found its batch {first.batch_id} ({lookup.listed} batch(es) listed)")
            return self._submitted(chunk, first)
        candidates = [handle.batch_id for handle in lookup.candidates if handle.batch_id not in known]
        if candidates:
            chunk.candidates = candidates
            self.say(
                f"{chunk.local_id}: {len(candidates)} batch(es) may be its lost creation "
                f"({', '.join(candidates)}); settling them by their custom ids"
            )
            return await self.settle(chunk)
        self.say(
            f"{chunk.local_id}: not created at {self.provider} ({lookup.listed} batch(es) listed); creating it"
        )
        return await self.create(chunk)

    async def settle(self, chunk: ChunkRecord) -> CreateOutcome:
        """Tell an "unresolved" chunk's candidates apart: cancel (or wait for) those still running,
        and read the custom ids of those that ended."""
        api = self.adapter.api
        ours = set(self.store.requests(chunk))
        left: list[str] = []
        mine: BatchHandle | None = None
        for batch_id in chunk.candidates:
            handle = BatchHandle(provider=self.provider, batch_id=batch_id, endpoint=self.adapter.endpoint)
            try:
                state = await api.poll(handle)
                if not state.ended and self.settings.uncertain == "cancel":
                    state = await api.cancel(handle)
                    self.say(f"{chunk.local_id}: cancelled {batch_id}, which may be its lost creation")
                if not state.ended:
                    left.append(batch_id)
                    continue
                theirs = await api.custom_ids(handle)
            except BatchAPIError as error:
                left.append(batch_id)
                self.say(f"{chunk.local_id}: could not settle {batch_id} yet: {error}")
                continue
            if theirs == ours and mine is None:
                mine = handle
            elif theirs == ours:
                self._possible_duplicate(chunk, batch_id, "a second batch with exactly its requests")
            else:
                self.notes.append(
                    f"{chunk.local_id}: {batch_id} was created in its window with its number of requests but "
                    f"holds other requests: not this run's"
                    + (" (it was cancelled to rule it out)" if self.settings.uncertain == "cancel" else "")
                )
        chunk.candidates = left
        if mine is not None:
            for batch_id in left:
                self._possible_duplicate(chunk, batch_id, "not settled when its batch was found")
            chunk.candidates = []
            return self._submitted(chunk, mine)
        if left:
            return self._unresolved(
                chunk, f"waiting for {', '.join(left)} to end to tell whether it is the chunk's"
            )
        self.say(f"{chunk.local_id}: none of the candidates was its batch; creating it")
        return await self.create(chunk)

    async def _cancel_duplicate(self, chunk: ChunkRecord, handle: BatchHandle) -> None:
        try:
            await self.adapter.api.cancel(handle)
        except BatchAPIError as error:
            self._possible_duplicate(
                chunk, handle.batch_id, f"a duplicate that could not be cancelled: {error}"
            )
            return
        self.notes.append(f"{chunk.local_id}: {handle.batch_id} duplicated its batch and was cancelled")

    def _possible_duplicate(self, chunk: ChunkRecord, batch_id: str, why: str) -> None:
        if batch_id not in chunk.possible_duplicates:
            chunk.possible_duplicates.append(batch_id)
        self.notes.append(
            f"{chunk.local_id}: batch {batch_id} may duplicate it ({why}); check it at {self.provider}"
        )

    def _submitted(self, chunk: ChunkRecord, handle: BatchHandle) -> CreateOutcome:
        chunk.handle, chunk.state, chunk.submitted_at = handle, "submitted", utc_now()
        chunk.candidates = []
        self.store.save(chunk)
        return CreateOutcome("submitted")

    def _unresolved(self, chunk: ChunkRecord, why: str) -> CreateOutcome:
        chunk.state = "unresolved"
        chunk.failure = why
        self.store.save(chunk)
        self.say(f"{chunk.local_id}: {why}")
        return CreateOutcome("unresolved", why)

    def _abandon(self, chunk: ChunkRecord, why: str) -> CreateOutcome:
        chunk.state, chunk.failure = "abandoned", why
        self.store.save(chunk)
        self.store.drop_input(chunk)
        return CreateOutcome("abandoned", why)
