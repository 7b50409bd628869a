"""What the evaluation loop needs from a suite, and nothing more.

The runner (`expvid.run`) is suite-agnostic: it asks the suite how to load items, how to sample
each item's media, how to phrase the prompt, how to read the answer, whether a judge is needed and
how task scores roll up into the paper's table. Everything a paper fixes (frames per level,
temperature, prompts) is written once, in the suite module, with the section it comes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from expvid.models.types import AnswerHints, ImagePart, Message
from expvid.schema import Item, JudgeSettings, Judgment, SamplerSettings
from expvid.scoring import Extraction
from expvid.scoring.levels import LevelSpec
from expvid.suites.base import Dataset, TaskSpec


class PromptOptions(BaseModel):
    """Run options that change what a model is shown (recorded in the manifest)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ExpVid ablation: add the narration (`asr_caption`) to the prompt. Off in the paper's setting.
    with_asr: bool = False
    #: Suite-specific switches (e.g. SciVideoBench chain-of-thought, keep mm:ss times).
    variant: dict[str, Any] = Field(default_factory=dict)


class FrameOptions(BaseModel):
    """Frame budget overrides: per level ("L1") or per task ("tools"), plus output size.

    Output size: `size` squashes to a square (ExpVid F.2: 224x224), `max_side` keeps the aspect
    ratio with the longest side at most that many pixels (never upscaled), both None keep the
    source size. When a caller sets neither, `with_suite_resolution` applies the suite's paper
    setting (SciVideoBench: source size; ProMQA: 1360 px, Table 10's 765p).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    counts: dict[str, int] = Field(default_factory=dict)
    fps: float | None = None
    max_frames: int | None = None
    size: int | None = Field(default=224, ge=1)
    max_side: int | None = Field(default=None, ge=1)
    image_format: str = "jpeg"
    jpeg_quality: int = 90
    #: Never sample more frames than this (an API's images-per-request limit).
    max_images: int | None = None


def resolution_given(frames: FrameOptions) -> bool:
    """Whether the caller chose the output size (`size` or `max_side` set explicitly, even to None)."""
    return bool({"size", "max_side"} & frames.model_fields_set)


def with_suite_resolution(frames: FrameOptions, suite: object) -> FrameOptions:
    """`frames` with the suite's paper resolution (`suite.default_resolution()`) unless one was given.

    Applied once, before the run's identity is taken, so a run directory records the resolution
    its frames really had and cannot be resumed at another one.
    """
    hook = getattr(suite, "default_resolution", None)
    if resolution_given(frames) or not callable(hook):
        return frames
    size, max_side = hook()
    return frames.model_copy(update={"size": size, "max_side": max_side})


#: What a ProMQA / SFE judge (and SFE's BERTScore) is shown: the reply as the model wrote it, as the
#: official code sends it ("raw"), or with its think blocks removed ("stripped", for reasoning models).
JUDGE_INPUTS: tuple[str, ...] = ("raw", "stripped")


class GenerationDefaults(BaseModel):
    temperature: float
    max_tokens: int
    source: str  # where the paper states them


class EvalSuite(Protocol):
    """A benchmark the runner can evaluate."""

    name: str
    #: Tasks in the paper's table order.
    tasks: tuple[TaskSpec, ...]
    #: How task scores roll up into level (or group) averages.
    levels: tuple[LevelSpec, ...]
    generation: GenerationDefaults

    def load(
        self,
        root: Path,
        *,
        tasks: Sequence[str] | None = None,
        strict: bool = False,
        check_media: bool = True,
    ) -> Dataset: ...

    def sampler(self, item: Item, frames: FrameOptions) -> SamplerSettings | None:
        """How to sample the item's video (None when the item has no video, e.g. images)."""
        ...

    def messages(self, item: Item, images: Sequence[ImagePart], options: PromptOptions) -> list[Message]:
        """The chat messages for one item: images in time order, then the prompt text."""
        ...

    def prompt_text(self, item: Item, options: PromptOptions) -> str:
        """The text part of the prompt (logged with every prediction)."""
        ...

    def hints(self, item: Item) -> AnswerHints:
        """The answer's shape for offline baselines (never its value)."""
        ...

    def extract(self, response: str | None, item: Item) -> Extraction: ...

    def needs_judge(self, item: Item, extraction: Extraction) -> bool: ...

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> Any:
        """The item's `ItemScore`."""
        ...

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> RunJudge | None:
        """The judge for items that need one: an LLM judge from a backend spec, else the offline one."""
        ...


class RunJudge(Protocol):
    """A judge as the runner uses it: one decision per (item, extracted answer)."""

    name: str

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment: ...

    def describe(self) -> dict[str, Any]: ...

    def manifest_settings(self) -> JudgeSettings: ...


class JudgeFactory(Protocol):
    def __call__(self, spec: str | None, backend_options: dict[str, Any]) -> RunJudge | None: ...
