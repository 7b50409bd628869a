"""The settings of one evaluation run, as the CLI and library users give them.

A run directory can only be resumed with the same configuration: `expvid.run.identity` derives
what can change an answer from these settings (every field except a listed few operational ones,
defaults resolved), so a field added here is compared on resume without further work.

Suite-specific settings are not fields here: `suite_settings` holds them as given (`-S KEY=VALUE`)
and the suite validates them with its own model (`expvid.suites.settings`). Run directories made
before that recorded them in several places (`prompt.variant`, `prompt.with_asr`, `suite_options`,
`judge_input`, `human_judgments`); `upgrade_settings` reads those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from expvid.models.pricing import Price
from expvid.models.types import InputMode, ThinkingConfig
from expvid.run.batch_settings import BatchSettings
from expvid.schema import FramesControl, frames_control_of
from expvid.suites.defaults import DEFAULT_SUITE
from expvid.suites.protocol import FrameOptions


def parse_frame_counts(text: str) -> dict[str, int]:
    """`"L1=8,L2=32,L3=128"` (or task names: `"tools=16"`) -> {"L1": 8, ...}; errors say which part."""
    counts: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip().isdigit() or int(value) < 1:
            raise ValueError(f"--frames: expected KEY=N with N >= 1 (e.g. L1=8,L2=32,L3=128), got {part!r}")
        counts[key.strip()] = int(value)
    return counts


def url_problem(url: str, flag: str) -> str | None:
    """Why `url` cannot be a server's base URL, or None. `localhost:8000/v1` would otherwise be
    read as scheme "localhost" and fail on every request, item after item."""
    parts = urlsplit(url.strip())
    if parts.scheme in ("http", "https") and parts.netloc:
        return None
    return (
        f"{flag} {url!r} is not an http(s) URL; write the scheme, e.g. http://{url.strip().split('://')[-1]}"
    )


def spec_url_problem(spec: str, flag: str) -> str | None:
    """Why a model spec is unusable (`expvid.models.spec.spec_problem`), prefixed with the flag, or None."""
    from expvid.models.spec import spec_problem

    problem = spec_problem(spec)
    return None if problem is None else f"{flag} {problem}"


def json_key_values(entries: list[str], *, flag: str) -> dict[str, Any]:
    """`KEY=VALUE` pairs; VALUE is JSON when it parses (numbers, lists, true), else the plain string."""
    import json

    options: dict[str, Any] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag}: expected KEY=VALUE, got {entry!r}")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def endpoint_options(
    base_url: list[str],
    api_key_env: str | None,
    timeout: float | None,
    max_retries: int | None,
    backend_option: list[str],
) -> dict[str, Any]:
    """The backend settings of the endpoint options `expvid eval` and `expvid build` share: one or
    several base URLs (several: one backend over all of them, `expvid.models.multi_endpoint`), the key's
    environment variable, the timeout, HTTP retries and `--backend-option KEY=VALUE` pairs.
    `ValueError` (its message names `--backend-option`) for a pair without `=`."""
    options = json_key_values(backend_option, flag="--backend-option")
    urls = list(dict.fromkeys(base_url))
    if len(urls) == 1:
        options["base_url"] = urls[0]
    elif urls:
        options["base_urls"] = urls
    if api_key_env:
        options["api_key_env"] = api_key_env
    if timeout:
        options["timeout_s"] = timeout
    if max_retries is not None:
        options["max_retries"] = max_retries
    return options


def upgrade_settings(recorded: dict[str, Any]) -> dict[str, Any]:
    """Settings recorded by an older run directory in today's shape: suite-specific ones (prompt
    variant, ASR ablation, suite options, judge input, human judgements) moved into `suite_settings`."""
    settings = dict(recorded)
    suite_settings = dict(settings.pop("suite_settings", None) or {})
    prompt = settings.pop("prompt", None) or {}
    if isinstance(prompt, dict):
        if prompt.get("with_asr"):
            suite_settings.setdefault("with_asr", True)
        for key, value in (prompt.get("variant") or {}).items():
            suite_settings.setdefault(key, value)
    for key, value in (settings.pop("suite_options", None) or {}).items():
        suite_settings.setdefault(key, value)
    for key in ("judge_input", "human_judgments"):
        value = settings.pop(key, None)
        if value is not None:
            suite_settings.setdefault(key, value)
    settings["suite_settings"] = suite_settings
    return settings


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = DEFAULT_SUITE
    data: Path
    model: str
    out: Path
    tasks: list[str] | None = None
    #: At most this many items per task (in file order); None runs everything.
    limit: int | None = Field(default=None, ge=1)
    concurrency: int = Field(default=8, ge=1)
    frames: FrameOptions = Field(default_factory=FrameOptions)
    temperature: float | None = None  # None: the suite's paper default
    max_tokens: int | None = None
    seed: int | None = 0
    #: Spec of an LLM judge backend (e.g. "openai:phi-3-mini@http://host:8000/v1"); None = offline judge.
    judge: str | None = None
    judge_concurrency: int = Field(default=4, ge=1)
    judge_base_url: str | None = None
    judge_api_key_env: str | None = None
    #: Backend options passed to `expvid.models.create_backend` (base_url, api_key_env, timeout_s, ...).
    backend_options: dict[str, Any] = Field(default_factory=dict)
    #: Frame and response caches live here; None disables both.
    cache_dir: Path | None = None
    #: Keep model responses in the cache too (frames are always cached when cache_dir is set).
    cache_responses: bool = True
    strict: bool = False
    retry_failed: bool = True
    n_bootstrap: int = Field(default=2000, ge=0)
    decode_workers: int = Field(default=2, ge=1)
    #: Samples per item (pass@k); sample s uses seed + s. The headline scores use sample 0.
    samples: int = Field(default=1, ge=1)
    #: The suite's own settings as given (`-S KEY=VALUE`), validated by the suite's settings model;
    #: the manifest records them resolved (`expvid suites show NAME` lists them).
    suite_settings: dict[str, Any] = Field(default_factory=dict)
    #: Reasoning switch and budget for models that support it (the paper compares think / no-think).
    thinking: ThinkingConfig | None = None
    #: How a video's sampled frames reach the model, the same on every backend: "images" (default;
    #: F.2's fair-comparison setting: 224x224 frames as independent images) or "video" (one video:
    #: the model's own video path, e.g. Qwen's temporal patches; vLLM's `video_url`).
    input_mode: InputMode = "images"
    #: What the model is shown of each item's frames (`--frames-control`; `expvid.run.frames_control`):
    #: "full" (default), "none", "single" (the middle frame) or "shuffled". Part of the resume identity;
    #: a run directory made before the setting resumes as "full".
    frames_control: FramesControl = "full"
    #: Stop the run after this many requests in a row failed with the same non-transient error
    #: (a 4xx other than 408/409/429, same message): it cannot succeed. 0 or None never stops.
    stop_after_errors: int | None = Field(default=10, ge=0)
    #: USD per 1M tokens by model name ("" = the evaluated model), over the price table (`--price`).
    prices: dict[str, Price] = Field(default_factory=dict)
    #: Stop sending once the run directory's spend would pass this many USD (`--max-cost`), or
    #: this many tokens (`--max-tokens-total`), from the usage the API reports (`run.budget`).
    max_cost: float | None = Field(default=None, gt=0)
    max_tokens_total: int | None = Field(default=None, gt=0)
    #: Send the requests through the provider's batch API (`--batch`; `run.batch_phase`); None: online.
    batch: BatchSettings | None = None

    @model_validator(mode="before")
    @classmethod
    def _older_shape(cls, data: Any) -> Any:
        """Settings recorded by older run directories (`upgrade_settings`) validate as today's."""
        if isinstance(data, dict) and {"prompt", "suite_options", "judge_input", "human_judgments"} & set(
            data
        ):
            return upgrade_settings(data)
        return data

    @model_validator(mode="after")
    def _urls_have_a_scheme(self) -> EvalConfig:
        options = self.backend_options
        urls = [("--base-url", options["base_url"])] if isinstance(options.get("base_url"), str) else []
        urls += [("--base-url", url) for url in options.get("base_urls") or [] if isinstance(url, str)]
        if self.judge_base_url is not None:
            urls.append(("--judge-base-url", self.judge_base_url))
        for flag, url in urls:
            problem = url_problem(url, flag)
            if problem:
                raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _control_fits(self) -> EvalConfig:
        if self.model.strip().startswith("blind:") and self.frames_control in ("single", "shuffled"):
            raise ValueError(
                f"--frames-control {self.frames_control} needs a model that sees frames; a blind: model "
                "sends none (that is --frames-control none)"
            )
        if self.frames_control == "shuffled" and self.input_mode == "video":
            raise ValueError(
                "--frames-control shuffled sends the frames as independent images; a video's frames out "
                "of order would contradict its timestamps (use --input-mode images)"
            )
        return self

    @property
    def effective_frames_control(self) -> str:
        """The control the run applies: "none" for a blind: model, else `frames_control`."""
        return frames_control_of(self.model, self.frames_control)

    @field_validator("tasks")
    @classmethod
    def _no_empty_tasks(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            return None
        return value
