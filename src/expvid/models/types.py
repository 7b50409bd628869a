"""The one protocol every model backend speaks: `await backend.generate(request) -> response`.

Requests carry images as encoded bytes in time order, never file names. `hints` is what the suite
tells a backend about the item beyond the messages: it lets offline baselines (random,
longest-option, ...) answer without a model and a caption pipeline reword the prompt's sentences
about images; it never contains the gold answer and is never sent to a remote API.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import fields
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from expvid.schema import AnswerType, ErrorKind, Usage


class TextPart(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An encoded image (JPEG or PNG bytes)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["image"] = "image"
    data: bytes = Field(repr=False)
    mime: str = "image/jpeg"

    @property
    def digest(self) -> str:
        """Content hash used in cache keys instead of the bytes themselves."""
        return hashlib.sha256(self.data).hexdigest()


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: list[ContentPart]

    @property
    def n_images(self) -> int:
        return sum(isinstance(part, ImagePart) for part in self.content)


def chat_messages(user: str, *, system: str | None = None, images: Sequence[ImagePart] = ()) -> list[Message]:
    """One user turn (its images before the text), after the system text when there is one."""
    turn = Message(role="user", content=[*images, TextPart(text=user)])
    if system is None:
        return [turn]
    return [Message(role="system", content=[TextPart(text=system)]), turn]


class AnswerHints(BaseModel):
    """What the suite tells a backend about an item beyond the messages, never sent to a model: the
    SHAPE of the expected answer (for offline baselines), never its value, and how to reword the
    prompt for a model that is given captions instead of the images."""

    answer_type: AnswerType
    options: dict[str, str] | None = None
    step_numbers: list[int] | None = None  # candidate step numbers (step prediction, generation)
    n_blanks: int = 0
    #: Gold answers of OTHER items of the same task (never this item's): what a chance baseline
    #: draws from on free-text and box items, which have no options to guess among.
    chance_answers: list[str] = Field(default_factory=list)
    #: Sentences of the suite's prompt that tell the model it is shown images, each with what a model
    #: given captions of the frames instead reads in its place (a `socratic:` pipeline's answerer).
    caption_rewrites: dict[str, str] = Field(default_factory=dict)


class ThinkingConfig(BaseModel):
    """Reasoning switch for backends that support it (Gemini budgets, Claude thinking, Qwen3-style)."""

    enabled: bool = False
    budget_tokens: int | None = None


class ResponseSchema(BaseModel):
    """Structured output: the reply must be one JSON value matching `json_schema` (a judge protocol
    that asks for JSON, as an official judge call may with OpenAI's `response_format`).

    Sent where the provider takes it (OpenAI-compatible `response_format` json_schema, the Responses
    API's `text.format`, Gemini's response schema); elsewhere the prompt alone asks for the JSON, and
    the prediction's `sent.not_sent` says so. A server that answers 400 to it is asked again without.
    """

    model_config = ConfigDict(frozen=True)

    #: The schema's name on the wire (OpenAI's `json_schema.name`).
    name: str
    json_schema: dict[str, Any]
    #: Constrained decoding to the schema (OpenAI's `strict`; every property required, none extra).
    strict: bool = True


#: How a run hands a video's sampled frames to a model: independent images (the default on every
#: backend: F.2's fair-comparison setting, 224x224 frames as images) or one video (the model's
#: video path: Qwen's temporal patches, vLLM's `video_url`). Image lists (a suite's figures) are images.
InputMode = Literal["images", "video"]
INPUT_MODES: tuple[InputMode, ...] = ("images", "video")


class GenerateRequest(BaseModel):
    messages: list[Message]
    temperature: float = 0.1
    max_tokens: int = 8192
    seed: int | None = None
    thinking: ThinkingConfig | None = None
    #: "video": each run of consecutive images in a message is one video of sampled frames, in time
    #: order (the runner sets it only for frames sampled from a video). Backends that take it add
    #: it to their cache key; the others refuse video runs when they are built.
    input_mode: InputMode = "images"
    hints: AnswerHints | None = None
    #: Ask for a JSON reply matching a schema where the provider supports it (`ResponseSchema`).
    response_schema: ResponseSchema | None = None
    #: Free-form labels for logs (item id, task). Not part of the cache key, never sent to a model.
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def n_images(self) -> int:
        return sum(message.n_images for message in self.messages)

    def without_images(self) -> GenerateRequest:
        """The same request with every image removed (the paper's no-vision ablation).

        A message that held only images disappears: APIs reject messages with empty content.
        """
        messages = [
            Message(role=m.role, content=[p for p in m.content if isinstance(p, TextPart)])
            for m in self.messages
        ]
        return self.model_copy(
            update={"messages": [m for m in messages if m.content], "input_mode": "images"}
        )


class GenerateResponse(BaseModel):
    text: str | None
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    model: str = ""
    request_hash: str | None = None
    #: The provider declined to answer (OpenAI `message.refusal`, Claude `stop_reason: refusal`,
    #: Gemini safety stops): its text, or the reason when it gave none. A refusal is an answer of
    #: the model, recorded and scored (as unparseable), never retried as a transport failure.
    refusal: str | None = None
    #: What actually went to the provider after its parameter rules and any 400-driven fallback:
    #: {"temperature": 0.1 | None, "token_limit_field": ..., "max_tokens": ..., "reasoning_effort": ...,
    #: "not_sent": {"temperature": "why"}, ...}. Recorded in every prediction.
    sent: dict[str, Any] = Field(default_factory=dict)


class BackendError(RuntimeError):
    """A request that failed for good (after the backend's own retries)."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind = ErrorKind.REQUEST,
        status: int | None = None,
        sent: dict[str, Any] | None = None,
        unreachable: bool = False,
    ):
        super().__init__(message)
        self.kind = kind
        self.status = status
        #: What the last attempt sent, when the backend knows (recorded with the failure).
        self.sent = sent or {}
        #: The last attempt could not reach the server (connection refused, DNS, TLS).
        self.unreachable = unreachable


def field_values(record: Any, *, leave_out: Collection[str] = ()) -> dict[str, object]:
    """A dataclass's fields (but `leave_out`) as `describe()` records them: tuples as JSON lists."""
    values = {
        field.name: getattr(record, field.name) for field in fields(record) if field.name not in leave_out
    }
    return {name: list(value) if isinstance(value, tuple) else value for name, value in values.items()}


def at_least_one(name: str, value: int) -> int:
    """`value`, checked: a count or size below 1 is a caller's mistake (ValueError naming `name`)."""
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


class BackendConfigError(ValueError):
    """A backend that cannot be built as asked: unknown spec, bad option, missing key or package.

    Raised when the backend is created, before any item is run, so a typo never costs a run.
    """


@runtime_checkable
class ModelBackend(Protocol):
    """What the runner needs from a model. Implementations must be safe to call concurrently."""

    name: str

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        """Answer one request, or raise `BackendError` once retries are exhausted."""
        ...

    def describe(self) -> dict[str, Any]:
        """Settings worth recording in a run manifest (no secrets)."""
        ...

    async def aclose(self) -> None: ...
