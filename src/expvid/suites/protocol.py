"""What the evaluation loop needs from a suite, and nothing more.

The runner (`expvid.run`) is suite-agnostic: it asks the suite how to load items, how to sample
each item's media, how to phrase the prompt, how to read the answer, whether a judge is needed and
how task scores roll up into the paper's table. Everything a paper fixes (frames per level,
temperature, prompts) is written once, in the suite module, with the section it comes from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from expvid.models.types import AnswerHints, ImagePart, Message
from expvid.schema import AnswerType, Item, JudgeSettings, Judgment, SamplerSettings
from expvid.schema.dataset import Dataset, TaskSpec
from expvid.scoring import Extraction
from expvid.scoring.levels import LevelSpec
from expvid.suites.settings import SuiteSettings


class LoadOptions(TypedDict, total=False):
    """`Suite.load`'s keyword options, for the suites that pass them on to their loader unchanged.

    `tasks`: the tasks to load (None: all); `strict`: the first invalid record is an error instead of
    being counted; `check_media`: look for each item's media on disk (a missing file is counted).
    """

    tasks: Sequence[str] | None
    strict: bool
    check_media: bool


class FrameOptions(BaseModel):
    """Frame budget overrides: per level ("L1") or per task ("tools"), plus output size.

    Output size: `size` squashes to a square (ExpVid F.2: 224x224), `max_side` keeps the aspect
    ratio with the longest side at most that many pixels (never upscaled), both None keep the
    source size. When a caller sets neither, the suite's `resolve_frames` applies its paper
    setting (the source size, or a size the paper fixes such as 765p: 1360 px).
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


def apply_preset(explicit: FrameOptions, preset: FrameOptions) -> FrameOptions:
    """A paper row's frame setting (`preset`: frames and resolution) under the options a user gave
    explicitly (`explicit`), which win: `--frames L3=64` with a preset changes the frames only."""
    update: dict[str, Any] = {
        "counts": explicit.counts or preset.counts,
        "fps": explicit.fps if explicit.fps is not None else preset.fps,
        "max_frames": explicit.max_frames if explicit.max_frames is not None else preset.max_frames,
    }
    if not resolution_given(explicit) and resolution_given(preset):
        update |= {"size": preset.size, "max_side": preset.max_side}
    return explicit.model_copy(update=update)


#: What a suite's judge (and a metric such as BERTScore) is shown: the reply as the model wrote it, as
#: official scorers send it ("raw"), or with its think blocks removed ("stripped", for reasoning models).
JUDGE_INPUTS: tuple[str, ...] = ("raw", "stripped")


class GenerationDefaults(BaseModel):
    temperature: float
    max_tokens: int
    source: str  # where the paper states them


class EvalSuite(Protocol):
    """A benchmark the runner can evaluate (see `expvid.suites.suite.Suite` for a base class with
    every optional hook, and `docs/write-a-suite.md`)."""

    name: str
    #: Tasks in the paper's table order.
    tasks: tuple[TaskSpec, ...]
    #: How task scores roll up into level (or group) averages.
    levels: tuple[LevelSpec, ...]
    generation: GenerationDefaults
    #: The suite's settings, validated by its own model (`expvid.suites.settings`).
    settings: SuiteSettings

    def load(
        self,
        root: Path,
        *,
        tasks: Sequence[str] | None = None,
        strict: bool = False,
        check_media: bool = True,
    ) -> Dataset: ...

    def resolve_frames(self, frames: FrameOptions) -> FrameOptions:
        """The frame options a run uses: the user's, with the suite's paper setting (preset,
        resolution) filled in where the user gave none; `ValueError` for options that do not apply."""
        ...

    def generation_defaults(self) -> GenerationDefaults:
        """The paper's decoding settings under the current settings (CoT may need more tokens)."""
        ...

    def sampler(self, item: Item, frames: FrameOptions) -> SamplerSettings | None:
        """How to sample the item's video (None when the item has no video, e.g. images)."""
        ...

    def messages(self, item: Item, images: Sequence[ImagePart]) -> list[Message]:
        """The chat messages for one item: images in time order, then the prompt text."""
        ...

    def prompt_text(self, item: Item) -> str:
        """The text part of the prompt (logged with every prediction)."""
        ...

    def hints(self, item: Item) -> AnswerHints:
        """The answer's shape for offline baselines (never its value), and the prompt's sentences
        about images reworded for a model given captions (`AnswerHints.caption_rewrites`)."""
        ...

    def extract(self, response: str | None, item: Item) -> Extraction: ...

    def needs_judge(self, item: Item, extraction: Extraction) -> bool: ...

    def may_need_judge(self, item: Item) -> bool:
        """Whether the item's answer can go to the judge: a run holding such an item builds one."""
        ...

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> Any:
        """The item's `ItemScore`."""
        ...

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> RunJudge | None:
        """The judge for items that need one: an LLM judge from a backend spec, else the offline one."""
        ...


#: The answers a suite's judge decides unless it says otherwise (`Suite.may_need_judge`).
JUDGED_ANSWER_TYPES = frozenset({AnswerType.BLANKS, AnswerType.FREE_TEXT})


def judge_needed(suite: Any, items: Iterable[Item]) -> bool:
    """Whether any of `items` may go to the suite's judge, as the suite says (`may_need_judge`; a
    suite written before that hook: blanks and free text). Asked before a run builds its judge, so
    that a judge is built exactly when scoring will ask for one."""
    ask = getattr(suite, "may_need_judge", None)
    if callable(ask):
        return any(ask(item) for item in items)
    return any(item.answer_type in JUDGED_ANSWER_TYPES for item in items)


class RunJudge(Protocol):
    """A judge as the runner uses it: one decision per (item, extracted answer)."""

    name: str

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment: ...

    def describe(self) -> dict[str, Any]: ...

    def manifest_settings(self) -> JudgeSettings: ...
