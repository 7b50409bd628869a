"""Options every backend accepts, validated once so that a typo fails before a run starts.

The runner passes the same options whatever the model spec is (`random` included), so offline
baselines accept them too and simply ignore what does not apply to them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expvid.models.types import BackendConfigError, InputMode

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
    #: What a cached reply is keyed by besides the request: "model" (the model name: the same model
    #: reached on another host or port answers from the cache, as a resumed build campaign needs) or
    #: "server" (the server URL too: judges, so a reply of a broken or other judge server is never
    #: replayed for a fixed one; see `models.cache`).
    cache_scope: Literal["model", "server"] = "model"
    #: Merged last into the request body (OpenAI-compatible, Anthropic) or config (Gemini).
    extra_body: dict[str, Any] | None = None
    #: Full-jitter exponential backoff: attempt n sleeps uniform(0, min(max, base * 2**n)).
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    #: A Retry-After longer than this is cut to this (a server asking for an hour is not obeyed).
    max_retry_after_s: float = Field(default=300.0, ge=0)
    #: Consecutive successes after which the limiter grows back by one slot.
    grow_after: int = Field(default=8, ge=1)
    #: None: chosen per model (`param_rules`: reasoning_effort for OpenAI reasoning models, nothing
    #: for deepseek-reasoner, chat_template_kwargs otherwise).
    thinking_style: ThinkingStyle | None = None
    #: Field carrying the token cap; None: chosen per model and server (`param_rules`: OpenAI's API
    #: and its reasoning models take "max_completion_tokens", other servers "max_tokens").
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None
    #: Send the temperature (True), never send it (False), or as the model's known rules say (None).
    send_temperature: bool | None = None
    #: The run's input mode (`--input-mode`; the runner always states it, None: a library caller
    #: that did not): backends that cannot take frames as a video refuse "video" when they are
    #: built, and a managed vLLM server is started to accept one video per prompt.
    input_mode: InputMode | None = None
    #: OpenAI-compatible servers: "chat" (`/chat/completions`) or "responses" (`/responses`, OpenAI's
    #: Responses API); None chooses by model: "responses" for the models served only there
    #: (gpt-5-pro, o3-pro, ...; `responses_backend.RESPONSES_ONLY`), "chat" otherwise.
    api: Literal["chat", "responses"] | None = None
    #: OpenAI's image `detail`, sent with every image: "high" (the tile rule, exactly), "low" (the
    #: base tokens, a 512 px view) or "auto" (OpenAI picks per image: the forecast is then only an
    #: upper bound). None sends nothing, which OpenAI takes as "auto".
    image_detail: Literal["auto", "low", "high"] | None = None

    # -- several OpenAI-compatible endpoints serving one model (openai:MODEL@URL1,URL2) ---------
    #: Spread requests over these servers (vLLM on several nodes, Ray Serve replicas, ...).
    base_urls: list[str] | None = None
    #: Requests in flight per endpoint; None shares `concurrency` out evenly over the endpoints.
    endpoint_concurrency: int | None = Field(default=None, ge=1)
    #: Consecutive failures after which an endpoint is benched for `endpoint_cooldown_s`.
    endpoint_failures_to_cooldown: int = Field(default=3, ge=1)
    #: First bench time; it doubles each time a benched endpoint fails its probe again (up to 16x).
    endpoint_cooldown_s: float = Field(default=30.0, ge=0)

    # -- managed `vllm serve` subprocess (vllm:PATH) -------------------------------------------
    #: Split the model over this many GPUs (`vllm serve --tensor-parallel-size`).
    tensor_parallel_size: int = Field(default=1, ge=1)
    #: Port for the server; None picks a free one.
    port: int | None = Field(default=None, ge=1, le=65535)
    host: str = "127.0.0.1"
    #: The vLLM command: an executable on PATH, a path, or a command line ("python -m vllm.entrypoints.cli.main").
    vllm_executable: str = "vllm"
    #: Extra arguments appended to `vllm serve` (e.g. ["--max-model-len", "32768"]).
    vllm_args: list[str] = Field(default_factory=list)
    #: Name the server answers to; None uses the checkpoint folder's name.
    served_model_name: str | None = None
    #: How long model loading may take before the start is declared failed.
    startup_timeout_s: float = Field(default=1800.0, gt=0)
    #: SIGTERM, then SIGKILL after this many seconds.
    shutdown_grace_s: float = Field(default=30.0, ge=0)
    #: Where `vllm-serve.log` goes (the runner passes the run directory's logs/); None: a temp folder.
    log_dir: Path | None = None

    # -- local Hugging Face transformers (hf:PATH) ----------------------------------------------
    #: "cpu", "cuda", "cuda:1", "mps"; None picks the first GPU if there is one.
    device: str | None = None
    #: A transformers device map ("auto", "balanced") to shard one model over several GPUs.
    device_map: str | None = None
    #: "auto": bfloat16 on GPUs that support it, float16 on older ones, float32 on CPU.
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    #: "sdpa", "flash_attention_2", "eager"; None lets transformers choose.
    attn_implementation: str | None = None
    #: Most requests generated together in one batch.
    batch_size: int = Field(default=8, ge=1)
    #: Most images in one batch (a batch is cut before it would exceed this); None: no cap.
    max_batch_images: int | None = Field(default=64, ge=1)
    #: How long the first request of a batch waits for company.
    batch_wait_s: float = Field(default=0.02, ge=0)
    #: Superseded by the run's input mode (`input_mode`, `--input-mode`), which every backend obeys
    #: the same way; "auto" follows it, and any other value must agree with it.
    frames_as: Literal["auto", "video", "images"] = "auto"
    #: Frame rate declared for frames passed as a video when the request carries no frame times
    #: (Qwen2.5-VL turns it into absolute time positions).
    video_fps: float = Field(default=1.0, gt=0)


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
