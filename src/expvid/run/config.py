"""The settings of one evaluation run, as the CLI and library users give them.

`identity()` is the part that decides what a model is asked and how it is sampled: a run directory
can only be resumed with the same identity, so a resumed run never mixes two settings in one table.
Operational knobs (concurrency, limits, task selection, timeouts) may change between resumes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from expvid.suites.protocol import FrameOptions, PromptOptions


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


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = "expvid"
    data: Path
    model: str
    out: Path
    tasks: list[str] | None = None
    #: At most this many items per task (in file order); None runs everything.
    limit: int | None = Field(default=None, ge=1)
    concurrency: int = Field(default=8, ge=1)
    frames: FrameOptions = Field(default_factory=FrameOptions)
    prompt: PromptOptions = Field(default_factory=PromptOptions)
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

    @field_validator("tasks")
    @classmethod
    def _no_empty_tasks(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            return None
        return value

    def identity(self) -> dict[str, Any]:
        """Settings that change what the model sees or how answers are produced."""
        return {
            "suite": self.suite,
            "model": self.model,
            "frames": self.frames.model_dump(mode="json"),
            "prompt": self.prompt.model_dump(mode="json"),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
