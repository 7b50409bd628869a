"""`expvid eval`'s generic options as typed, and the one place they become an `EvalConfig`.

The command line hands over text and numbers (`--frames L1=8,L3=64`, `--base-url` twice,
`--backend-option top_k=20`, `-S language=both`); this model holds them unchanged, and `to_config`
turns them into the run's configuration: frame counts parsed, output size chosen, backend options
assembled, the thinking switch built, and an `hf:` dataset fetched into the cache. Every mistake is
an `OptionError` naming the flag, raised before any work. Library users build `EvalConfig` directly.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expvid.models.pricing import Price, parse_price_override
from expvid.models.types import ThinkingConfig
from expvid.run.batch_settings import BatchSettings
from expvid.run.config import (
    EvalConfig,
    endpoint_options,
    json_key_values,
    parse_frame_counts,
    spec_url_problem,
    url_problem,
)
from expvid.schema import FRAMES_CONTROLS
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import DEFAULT_SUITE
from expvid.suites.settings import SettingsError, parse_pairs


class OptionError(ValueError):
    """A command-line option that cannot be used; `flag` names it."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


#: The options `EvalConfig` takes as given, under the same name (it checks their values itself).
_AS_GIVEN = {
    "model",
    "out",
    "limit",
    "concurrency",
    "temperature",
    "max_tokens",
    "seed",
    "samples",
    "strict",
    "judge",
    "judge_base_url",
    "judge_api_key_env",
    "stop_after_errors",
    "max_tokens_total",
    "input_mode",
    "frames_control",
}


class EvalOptions(BaseModel):
    """The options of `expvid eval` exactly as given (None: not given)."""

    model_config = ConfigDict(extra="forbid")

    data: str
    model: str
    out: Path
    suite: str | None = None
    tasks: str | None = None
    limit: int | None = None
    concurrency: int = 8
    frames: str | None = None
    fps: float | None = None
    max_frames: int | None = None
    size: int | None = None
    max_side: int | None = None
    max_images: int | None = None
    input_mode: str = "images"
    frames_control: str = "full"
    temperature: float | None = None
    max_tokens: int | None = None
    judge: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str | None = None
    base_url: list[str] = Field(default_factory=list)
    api_key_env: str | None = None
    timeout: float | None = None
    max_retries: int | None = None
    thinking: bool | None = None
    thinking_budget: int | None = None
    tensor_parallel_size: int | None = None
    vllm_args: str | None = None
    backend_option: list[str] = Field(default_factory=list)
    cache_dir: Path | None = None
    no_cache: bool = False
    strict: bool = False
    no_retry_failed: bool = False
    stop_after_errors: int = 10
    seed: int = 0
    samples: int = 1
    suite_option: list[str] = Field(default_factory=list)
    # -- what a run may cost, and how it reaches an API (`docs/api-campaigns.md`) ---------------
    price: list[str] = Field(default_factory=list)
    max_cost: float | None = None
    max_tokens_total: int | None = None
    api: str | None = None
    image_detail: str | None = None
    batch: bool = False
    batch_option: list[str] = Field(default_factory=list)

    def check_urls(self) -> None:
        """Servers without an http(s) scheme would fail request after request: refuse them now."""
        for flag, url in [
            *(("--base-url", u) for u in self.base_url),
            ("--judge-base-url", self.judge_base_url),
        ]:
            problem = None if url is None else url_problem(url, flag)
            if problem:
                raise OptionError(flag, problem.removeprefix(f"{flag} "))
        for flag, spec in (("--model", self.model), ("--judge", self.judge)):
            problem = None if spec is None else spec_url_problem(spec, flag)
            if problem:
                raise OptionError(flag, problem.removeprefix(f"{flag} "))

    def suite_settings(self) -> dict[str, str]:
        try:
            return parse_pairs(self.suite_option)
        except SettingsError as error:
            raise OptionError("-S", str(error)) from None

    def task_names(self) -> list[str] | None:
        return [t.strip() for t in self.tasks.split(",") if t.strip()] if self.tasks else None

    def frame_options(self) -> FrameOptions:
        try:
            counts = parse_frame_counts(self.frames) if self.frames else {}
        except ValueError as error:
            raise OptionError("--frames", str(error)) from None
        if self.size is not None and self.max_side is not None:
            raise OptionError("--max-side", "give --size or --max-side, not both")
        output: dict[str, int | None] = {}
        if self.size is not None:
            output = {"size": self.size or None, "max_side": None}
        elif self.max_side is not None:
            output = {"size": None, "max_side": self.max_side or None}
        return FrameOptions(
            counts=counts, fps=self.fps, max_frames=self.max_frames, max_images=self.max_images, **output
        )

    def backend_options(self) -> dict[str, Any]:
        try:  # the endpoint options are `expvid build`'s too: one implementation (`run.config`)
            options = endpoint_options(
                self.base_url, self.api_key_env, self.timeout, self.max_retries, self.backend_option
            )
        except ValueError as error:
            raise OptionError("--backend-option", str(error)) from None
        if self.tensor_parallel_size is not None:
            options["tensor_parallel_size"] = self.tensor_parallel_size
        if self.vllm_args:
            options["vllm_args"] = shlex.split(self.vllm_args)
        if self.api is not None:
            if self.api not in ("chat", "responses"):
                raise OptionError("--api", f"expected 'chat' or 'responses', got {self.api!r}")
            options["api"] = self.api
        if self.image_detail is not None:
            if self.image_detail not in ("auto", "low", "high"):
                raise OptionError(
                    "--image-detail", f"expected 'auto', 'low' or 'high', got {self.image_detail!r}"
                )
            options["image_detail"] = self.image_detail
        return options

    def prices(self) -> dict[str, Price]:
        """`--price [MODEL=]IN,OUT` by model name ("" for the evaluated model)."""
        prices: dict[str, Price] = {}
        for entry in self.price:
            try:
                model, value = parse_price_override(entry)
            except ValueError as error:
                raise OptionError("--price", str(error)) from None
            prices[model or ""] = value
        return prices

    def batch_settings(self) -> BatchSettings | None:
        """`--batch` with its `--batch-option KEY=VALUE` settings (validated by `BatchSettings`)."""
        if not self.batch:
            if self.batch_option:
                raise OptionError("--batch-option", "--batch-option needs --batch")
            return None
        try:
            values = json_key_values(self.batch_option, flag="--batch-option")
            return BatchSettings(**values)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise OptionError("--batch-option", problems) from None
        except ValueError as error:
            raise OptionError("--batch-option", str(error)) from None

    def thinking_config(self) -> ThinkingConfig | None:
        if self.thinking is None and self.thinking_budget is None:
            return None
        enabled = self.thinking if self.thinking is not None else self.thinking_budget != 0
        return ThinkingConfig(enabled=enabled, budget_tokens=self.thinking_budget)

    def to_config(self, *, default_cache: Path, echo: Callable[[str], None] = lambda _: None) -> EvalConfig:
        """The run's configuration; an `hf:` dataset is fetched into the cache first, once every
        option is known to be usable."""
        self.check_urls()
        if self.input_mode not in ("images", "video"):
            raise OptionError("--input-mode", f"expected 'images' or 'video', got {self.input_mode!r}")
        if self.frames_control not in FRAMES_CONTROLS:
            raise OptionError(
                "--frames-control",
                f"expected one of {', '.join(FRAMES_CONTROLS)}, got {self.frames_control!r}",
            )
        settings = self.suite_settings()
        tasks = self.task_names()
        parsed = {  # what the options mean, each checked before any work
            "frames": self.frame_options(),
            "backend_options": self.backend_options(),
            "thinking": self.thinking_config(),
            "prices": self.prices(),
            "batch": self.batch_settings(),
        }
        data, suite = self.resolve_data(settings, tasks, self.cache_dir or default_cache, echo)
        try:
            return EvalConfig(
                **self.model_dump(include=_AS_GIVEN),
                **parsed,
                suite=suite,
                data=data,
                tasks=tasks,
                suite_settings=settings,
                cache_dir=None if self.no_cache else (self.cache_dir or default_cache),
                retry_failed=not self.no_retry_failed,
                max_cost=self.max_cost or None,
            )
        except ValidationError as error:
            message = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
            if "--frames-control" not in message:
                raise
            raise OptionError("--frames-control", message) from None

    def resolve_data(
        self, settings: dict[str, str], tasks: list[str] | None, cache_root: Path, echo: Callable[[str], None]
    ) -> tuple[Path, str]:
        """(dataset root, suite): `--data` as a local root, or an `hf:` spec fetched into the cache
        (the suite then defaults to the one whose release the repo is)."""
        if not self.data.startswith("hf:"):
            return Path(self.data), self.suite or DEFAULT_SUITE
        from expvid.hub.dataspec import resolve_data

        return resolve_data(
            self.data, suite=self.suite, tasks=tasks, settings=settings, cache_root=cache_root, echo=echo
        )
