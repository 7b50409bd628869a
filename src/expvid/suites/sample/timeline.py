"""Frame ranges of an experiment's steps, stages and concluding slide.

Everything downstream (clips, transcript cue times, the truth sidecar) is derived from these
ranges, so a clip's frames, its narration and the recorded truth can never disagree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from expvid.suites.sample.layout import FPS, SLIDE_SECONDS
from expvid.suites.sample.scripts import ExperimentScript

FrameRange = tuple[int, int]  # [start, end) in source frame numbers


@dataclass(frozen=True)
class Timeline:
    fps: int
    #: Range of step n (1-based, global) at index n - 1.
    steps: tuple[FrameRange, ...]
    #: Range of stage s (1-based) at index s - 1.
    stages: tuple[FrameRange, ...]
    #: Global step numbers of each stage.
    stage_steps: tuple[tuple[int, ...], ...]
    slide: FrameRange
    n_frames: int

    @property
    def duration(self) -> float:
        return self.n_frames / self.fps

    @property
    def procedure_end(self) -> int:
        """First frame of the concluding slide: what a Level-3 video keeps."""
        return self.slide[0]

    def seconds(self, frame_range: FrameRange) -> tuple[float, float]:
        return frame_range[0] / self.fps, frame_range[1] / self.fps


def plan_timeline(script: ExperimentScript, seed: int, fps: int = FPS) -> Timeline:
    """Give each step a duration from its narration (read at ~2.5 words/s) plus ~3 s of action.

    A little seeded jitter makes durations differ between seeds, as real footage does.
    """
    rng = random.Random(f"{seed}:{script.video_id}:timeline")
    cursor = 0
    steps: list[FrameRange] = []
    stages: list[FrameRange] = []
    stage_steps: list[tuple[int, ...]] = []
    for stage in script.stages:
        stage_start, numbers = cursor, []
        for step in stage.steps:
            seconds = min(13.0, max(6.0, 3.0 + len(step.narration.split()) / 2.5 + rng.uniform(0.0, 1.0)))
            length = round(seconds * fps)
            steps.append((cursor, cursor + length))
            numbers.append(len(steps))
            cursor += length
        stages.append((stage_start, cursor))
        stage_steps.append(tuple(numbers))
    slide = (cursor, cursor + round(SLIDE_SECONDS * fps))
    return Timeline(
        fps=fps,
        steps=tuple(steps),
        stages=tuple(stages),
        stage_steps=tuple(stage_steps),
        slide=slide,
        n_frames=slide[1],
    )
