"""The plan the writers execute: item drafts, clip specifications, and the experiments they cut.

Planning is pure (no files, no video), so annotations and the truth sidecar are a function of the
seed alone and can be checked byte for byte, while rendering runs separately and in parallel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from expvid.suites.sample.scripts import ExperimentScript
from expvid.suites.sample.timeline import FrameRange, Timeline


@dataclass(frozen=True)
class PlannedExperiment:
    script: ExperimentScript
    timeline: Timeline

    @property
    def video_id(self) -> str:
        return self.script.video_id

    def narration(self, steps: tuple[int, ...] | list[int]) -> str:
        """The narration of the given global step numbers, in order (an item's `asr_caption`)."""
        all_steps = self.script.steps
        return " ".join(all_steps[number - 1].narration for number in steps)


@dataclass(frozen=True)
class ClipSpec:
    """One video file of the release: which source frame ranges it holds, in order."""

    path: str
    video_id: str
    kind: str  # level_1 | segment | prediction | verification | level_3
    ranges: tuple[FrameRange, ...]
    steps: tuple[int, ...]  # global step numbers whose frames it shows (all of them, or all but one)
    removed: FrameRange | None = None  # the step left out (verification, prediction)
    removed_step: int | None = None

    @property
    def n_frames(self) -> int:
        return sum(end - start for start, end in self.ranges)


@dataclass
class Draft:
    """An item before ids and option letters are assigned.

    Choice items that need balanced answer positions carry `correct` and `distractors`; the release
    planner turns them into `options` and an answer letter across the whole task at once.
    """

    task: str
    video_path: str
    question: str
    asr_caption: str
    video_id: str
    category: str
    answer: Any = None
    options: dict[str, str] | None = None
    correct: str | None = None
    distractors: tuple[str, ...] = ()


def numbered(texts: list[str] | tuple[str, ...]) -> str:
    """Number texts the way the release's step lists and ordering options do ("1. a", "2. b", ...)."""
    return "\n".join(f"{number}. {text}" for number, text in enumerate(texts, start=1))
