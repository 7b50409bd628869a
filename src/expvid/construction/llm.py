"""Every model call of the build: one request, validated, re-asked a bounded number of times, counted.

A reply is only ever used after `parse` accepted it (a pydantic model per prompt, plus the stage's own
checks). An unusable reply - no JSON, a refusal, the wrong shape, a distractor that is not a
permutation - is answered with the reply itself and a message saying what was wrong
(`prompts/retry_feedback.txt`), up to `max_attempts` requests in all; then the call fails with a
`DraftFailure` that the stage records and skips. Because the feedback is part of the request, every
attempt is a different request, so the response cache (keyed by the full request) replays a whole
retry sequence on a re-run without asking the model again.

Backend failures (HTTP errors after the backend's own retries) are `DraftFailure(transient=True)`,
invalid replies after every re-ask `DraftFailure(transient=False)`. Either way the unit failed: the
stage is not saved, the failure is written down (`retries.RetryBook`), and the next run asks that
unit afresh in a new cache round instead of replaying its cached bad replies. Every call names its
build `phase` (curation, level1, level2, level3, blind_audit) for `--redo` and the report's per-stage
counts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, overload

from pydantic import BaseModel, ValidationError

from expvid.construction.accounting import Ledger
from expvid.construction.jsontext import MalformedReply, extract_json
from expvid.construction.prompts import load_prompt, retry_feedback
from expvid.construction.retries import RetryBook
from expvid.models.cache import CACHE_ROUND, cache_round, request_fingerprint
from expvid.models.types import (
    BackendError,
    GenerateRequest,
    GenerateResponse,
    ImagePart,
    InputMode,
    Message,
    ModelBackend,
    TextPart,
    chat_messages,
)
from expvid.schema import describe_validation_error

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: Longest part of a bad reply echoed back in a retry (a runaway reply must not grow every request).
ECHO_LIMIT = 4000


class InvalidReply(ValueError):
    """A reply that parsed but breaks a rule of its stage; the message is shown to the model."""


@dataclass(frozen=True)
class Drafted(Generic[T]):
    """An accepted reply: the parsed value and where it came from."""

    value: T
    raw_response: str
    model: str
    prompt_id: str
    prompt_sha256: str
    request_sha256: str | None
    attempts: int
    stage: str

    def provenance(self) -> dict[str, Any]:
        """One entry of an item's `drafts` (candidates_format.md)."""
        return {
            "stage": self.stage,
            "model": self.model,
            "prompt_id": self.prompt_id,
            "prompt_sha256": self.prompt_sha256,
            "request_sha256": self.request_sha256,
            "attempts": self.attempts,
            "raw_response": self.raw_response,
        }


class DraftFailure(Exception):
    """No usable reply: the backend failed (`transient`) or every attempt was invalid."""

    def __init__(self, stage: str, prompt_id: str, message: str, *, transient: bool, replies: int = 0):
        super().__init__(f"{prompt_id}: {message}")
        self.stage = stage
        self.prompt_id = prompt_id
        self.message = message
        self.transient = transient
        self.replies = replies


@overload
def json_parser(schema: type[M]) -> Callable[[str | None], M]: ...


@overload
def json_parser(schema: type[M], check: Callable[[M], T]) -> Callable[[str | None], T]: ...


def json_parser(schema: type[M], check: Callable[[M], Any] | None = None) -> Callable[[str | None], Any]:
    """A `parse` for `LLMClient.ask`: JSON out of the reply, validated by `schema`, then `check`."""

    def parse(text: str | None) -> Any:
        value = extract_json(text)
        model = schema.model_validate(value)
        return check(model) if check is not None else model

    return parse


def describe_problem(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return "the JSON does not have the required fields and types: " + describe_validation_error(error)
    return str(error)


class ClientSettings(Protocol):
    """The asking settings of a build config (every recipe's config has them), for `LLMClient`."""

    @property
    def max_attempts(self) -> int: ...
    @property
    def temperature(self) -> float: ...
    @property
    def max_tokens(self) -> int: ...


class LLMClient:
    """A backend in one model role (`llm`, `vlm`, `blind`) with validation, retries and accounting."""

    def __init__(
        self,
        backend: ModelBackend,
        role: str,
        settings: ClientSettings,
        ledger: Ledger,
        retries: RetryBook | None = None,
    ) -> None:
        """The client of one role as a build asks it: the config's attempts, temperature and token limit."""
        if settings.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.backend = backend
        self.role = role
        self.ledger = ledger
        self.max_attempts = settings.max_attempts
        self.temperature = settings.temperature
        self.max_tokens = settings.max_tokens
        self.retries = retries
        ledger.models[role] = backend.name
        self._in_flight: dict[str, asyncio.Future[GenerateResponse]] = {}

    @property
    def model(self) -> str:
        return self.backend.name

    async def ask_prompt(
        self,
        prompt_id: str,
        values: dict[str, str],
        parse: Callable[[str | None], T],
        *,
        stage: str | None = None,
        images: Sequence[ImagePart] = (),
        seed: int | None = None,
        temperature: float | None = None,
        phase: str = "",
    ) -> Drafted[T]:
        """Fill template `prompt_id` with `values` (images go before the text) and ask until `parse` accepts."""
        return await self.ask(
            prompt_messages(prompt_id, values, images),
            parse,
            prompt_id=prompt_id,
            prompt_sha256=load_prompt(prompt_id).sha256,
            stage=stage or prompt_id,
            seed=seed,
            temperature=temperature,
            phase=phase,
        )

    async def ask(
        self,
        messages: list[Message],
        parse: Callable[[str | None], T],
        *,
        prompt_id: str,
        prompt_sha256: str,
        stage: str,
        seed: int | None = None,
        temperature: float | None = None,
        phase: str = "",
        input_mode: InputMode = "images",
        metadata: dict[str, Any] | None = None,
    ) -> Drafted[T]:
        """Ask until `parse` accepts. `input_mode="video"`: each run of consecutive images is one
        video (the backend must take videos); `metadata` is added to the request's (never sent, not
        in the cache key; e.g. the frames' times, which video backends read)."""
        phase = phase or phase_of(prompt_id)
        counts = self.ledger.counts(self.role, stage)
        phase_counts = self.ledger.phase(phase)
        conversation = list(messages)
        unit: str | None = None
        round_ = 0
        for attempt in range(1, self.max_attempts + 1):
            request = make_request(
                conversation,
                temperature=self.temperature if temperature is None else temperature,
                max_tokens=self.max_tokens,
                seed=seed,
                stage=stage,
                prompt_id=prompt_id,
                attempt=attempt,
                input_mode=input_mode,
            )
            request.metadata.update(metadata or {})
            if unit is None:
                unit = request_key(request)
                if self.retries is not None:
                    round_ = self.retries.round_for(phase, unit)
            if round_:
                request.metadata[CACHE_ROUND] = round_
            try:
                response = await self._generate(request)
            except BackendError as error:
                counts.failures += 1
                phase_counts.failures += 1
                self._record_failure(phase, unit, round_)
                raise DraftFailure(stage, prompt_id, f"request failed: {error}", transient=True) from None
            self.ledger.record_response(self.role, stage, response, phase=phase)
            try:
                value = parse(response.text)
            except (MalformedReply, InvalidReply, ValidationError) as error:
                counts.invalid_replies += 1
                phase_counts.invalid_replies += 1
                problem = describe_problem(error)
                if attempt == self.max_attempts:
                    counts.failures += 1
                    phase_counts.failures += 1
                    self._record_failure(phase, unit, round_)
                    raise DraftFailure(
                        stage,
                        prompt_id,
                        f"no valid reply in {attempt} attempt(s); last problem: {problem}",
                        transient=False,
                        replies=attempt,
                    ) from None
                counts.retries += 1
                phase_counts.retries += 1
                conversation = [*messages, *_feedback(response.text, problem, attempt + 1, self.max_attempts)]
                continue
            return Drafted(
                value=value,
                raw_response=response.text or "",
                model=self.model,
                prompt_id=prompt_id,
                prompt_sha256=prompt_sha256,
                request_sha256=response.request_hash,
                attempts=attempt,
                stage=stage,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _record_failure(self, phase: str, unit: str | None, round_: int) -> None:
        if self.retries is not None and unit is not None:
            self.retries.record_failure(phase, unit, round_)

    async def _generate(self, request: GenerateRequest) -> GenerateResponse:
        """One model call; an identical request already in flight is awaited instead of sent again.

        The response cache only helps once a reply is stored, so two identical requests made at the
        same moment (the same sentence in two videos, two blind samples of identical items) would
        both reach the model; the second one here gets the first one's reply, counted as cached.
        """
        key = request_key(request)
        pending = self._in_flight.get(key)
        if pending is not None:
            response = await asyncio.shield(pending)
            return response.model_copy(update={"cached": True})
        future: asyncio.Future[GenerateResponse] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception not retrieved"
        self._in_flight[key] = future
        try:
            response = await self.backend.generate(request)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as error:
            future.set_exception(error)
            raise
        else:
            future.set_result(response)
            return response
        finally:
            del self._in_flight[key]


#: Build phase of each prompt (for `--redo` and the per-stage counts of the report).
PHASES = {
    "transcript_quality": "curation",
    "visual_caption": "level1",
    "findings_summary": "level3",
    "level3_blanks": "level3",
    "expvid_f4_eval_prompt": "blind_audit",
}


def phase_of(prompt_id: str) -> str:
    if prompt_id.startswith("g1_"):
        return "level1"
    if prompt_id.startswith("g2_"):
        return "level2"
    return PHASES.get(prompt_id, prompt_id)


def prompt_messages(
    prompt_id: str, values: dict[str, str], images: Sequence[ImagePart] = ()
) -> list[Message]:
    """The messages of template `prompt_id` filled with `values` (images before the text): what
    `LLMClient.ask_prompt` sends, and what the dry run looks up in the response cache."""
    system, user = load_prompt(prompt_id).fill(**values)
    return chat_messages(user, system=system, images=images)


def make_request(
    messages: list[Message],
    *,
    temperature: float,
    max_tokens: int,
    seed: int | None,
    stage: str,
    prompt_id: str,
    attempt: int = 1,
    input_mode: InputMode = "images",
) -> GenerateRequest:
    """The request `LLMClient.ask` sends (the dry run builds the same one to look it up in the cache)."""
    return GenerateRequest(
        messages=messages,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        input_mode=input_mode,
        metadata={"stage": stage, "prompt_id": prompt_id, "attempt": attempt},
    )


def request_key(request: GenerateRequest) -> str:
    """Identity of a request as the cache sees it (content and round; not where it is sent)."""
    payload = [request_fingerprint(request), cache_round(request)]
    return hashlib.sha256(compact_json(payload).encode()).hexdigest()


def _feedback(reply: str | None, problem: str, attempt: int, attempts: int) -> list[Message]:
    echoed = (reply or "")[:ECHO_LIMIT] or "(empty reply)"
    return [
        Message(role="assistant", content=[TextPart(text=echoed)]),
        Message(role="user", content=[TextPart(text=retry_feedback(problem, attempt, attempts))]),
    ]


def compact_json(value: Any) -> str:
    """Stable one-line JSON (for state files and hashes)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
