"""Options every backend accepts, validated once so that a typo fails before a run starts.

The runner passes the same options whatever the model spec is (`random` included), so offline
baselines accept them too and simply ignore what does not apply to them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expvid.models.types import BackendConfigError

#: How a request's `thinking` switch reaches an OpenAI-compatible server. vLLM and SGLang read
#: `chat_template_kwargs.enable_thinking` (Qwen3-style templates); OpenAI reasoning models read
#: `reasoning_effort`; "none" sends nothing (DeepSeek picks reasoning by model name).
ThinkingStyle = Literal["chat_template_kwargs", "reasoning_effort", "none"]


class BackendOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    #: Name of the environment variable holding the API key (the key itself is never stored here).
    api_key_env: str | None = None
    timeout_s: float = Field(default=600.0, gt=0)
    #: Retries after the first attempt, for 429, 408, 409, 5xx, network errors, timeouts, bad bodies.
    max_retries: int = Field(default=6, ge=0)
    #: Upper bound of the adaptive limiter, and where it starts.
    concurrency: int = Field(default=8, ge=1)
    #: A request with more images than this fails with a BackendError; nothing is dropped.
    max_images: int | None = Field(default=None, ge=0)
    #: Directory of the sqlite response cache; None disables caching.
    cache_dir: Path | None = None
    #: Merged last into the request body (OpenAI-compatible, Anthropic) or config (Gemini).
    extra_body: dict[str, Any] | None = None
    #: Full-jitter exponential backoff: attempt n sleeps uniform(0, min(max, base * 2**n)).
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    #: A Retry-After longer than this is cut to this (a server asking for an hour is not obeyed).
    max_retry_after_s: float = Field(default=300.0, ge=0)
    #: Consecutive successes after which the limiter grows back by one slot.
    grow_after: int = Field(default=8, ge=1)
    thinking_style: ThinkingStyle = "chat_template_kwargs"
    #: Field carrying the token cap; newer OpenAI models want "max_completion_tokens".
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"


def parse_options(options: dict[str, Any]) -> BackendOptions:
    """Validate keyword options, turning pydantic's error into one readable BackendConfigError."""
    try:
        return BackendOptions(**options)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'options'}: {issue['msg']}"
            for issue in error.errors()
        )
        raise BackendConfigError(f"invalid backend options: {problems}") from None
