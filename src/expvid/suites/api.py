"""The public plug-in API: everything a suite package needs, from one module.

A suite written against this module alone (one of the built-in suites is; so is the worked
example of docs/write-a-suite.md) keeps working when expvid's internals move. What it provides:

- base classes: `Suite` (every optional hook defaulted), `VideoQASuite` (multiple-choice and open
  video questions in one JSON release file, open answers judged by an LLM with the paper's prompt);
- settings: `SuiteSettings`, `setting`, `frame_preset_setting`, `sampling_setting`,
  `judge_input_setting`, `JudgeInput`, `check_preset`;
- data: `Item`, `AnswerType`, `VideoRef`, `ImagesRef`, `TaskSpec`, `Dataset`, `RecordError`,
  `RecordReader`, `read_json_release`, `read_parquet_release`, `text_id`, `DataError`, `describe_validation_error`;
- run settings: `FrameOptions`, `GenerationDefaults`, `SamplerSettings`, `LevelSpec`, `LevelRule`;
- judging: `PromptedJudge`, `OfflineMatchJudge`, `JudgeReplyError`, `ResponseSchema` (a judge's
  structured JSON reply); `GradedLLMJudge` (a graded judge with fixed prompt texts and the token
  budget fitted to reasoning judges), `parse_scale_score` / `GradedParseError` (a strict reader of a
  bare 0..N score), `JudgeAdapter` (what the runner calls: a judge and what it reads);
- report: `RunAnalysis` (a table across several runs, offered by `run_analyses()`);
- audit: `ShortcutSolver` (a text-only solver the suite adds to `expvid audit` from its
  `shortcut_solvers()` method; `option_counts` states its options per item);
- samples: `SampleReport`, `claim_sample_dir`, `scene_frame`, `write_video` (synthetic videos with
  frame codes).

Register the suite class under the entry-point group `expvid.suites` in the package's metadata.
"""

from __future__ import annotations

from typing import Any

from expvid.models.types import AnswerHints, ImagePart, Message, ResponseSchema, TextPart
from expvid.schema import (
    AnswerType,
    DataError,
    ImagesRef,
    Item,
    ItemScore,
    Judgment,
    SamplerSettings,
    VideoRef,
    describe_validation_error,
)
from expvid.schema.dataset import Dataset, TaskSpec
from expvid.scoring import Extraction, extract_answer, score_item
from expvid.scoring.judges.graded import GradedLLMJudge, GradedParseError, parse_scale_score
from expvid.scoring.judges.prompted import JudgeReplyError, OfflineMatchJudge, PromptedJudge
from expvid.scoring.levels import LevelRule, LevelSpec
from expvid.suites.analyses import RunAnalysis
from expvid.suites.defaults import ENTRY_POINT_GROUP
from expvid.suites.judge_adapter import JudgeAdapter, JudgeInput, judge_input_setting
from expvid.suites.protocol import EvalSuite, FrameOptions, GenerationDefaults, RunJudge
from expvid.suites.records import RecordError, RecordReader, read_json_release, read_parquet_release, text_id
from expvid.suites.release_io import SampleDirectoryError, claim_sample_dir
from expvid.suites.sample_report import SampleReport
from expvid.suites.settings import (
    SuiteSettings,
    check_preset,
    frame_preset_setting,
    sampling_setting,
    setting,
)
from expvid.suites.shortcuts import ShortcutSolver
from expvid.suites.suite import Suite
from expvid.suites.videoqa import VideoQASuite


def scene_frame(index: int, width: int, height: int, *, seed: int = 0, fps: float = 30.0) -> Any:
    """A synthetic frame whose top band codes its index (`expvid.media.synth`), for sample videos."""
    from expvid.media.synth import scene_frame as make

    return make(index, width, height, seed=seed, fps=fps)


def write_video(path: Any, frames: Any, *, fps: float, **options: Any) -> Any:
    """Encode `frames` (RGB arrays) as an H.264 video at `path` (`expvid.media.synth.write_video`)."""
    from expvid.media.synth import write_video as write

    return write(path, frames, fps=fps, **options)


__all__ = [
    "ENTRY_POINT_GROUP",
    "AnswerHints",
    "AnswerType",
    "DataError",
    "Dataset",
    "EvalSuite",
    "Extraction",
    "FrameOptions",
    "GenerationDefaults",
    "GradedLLMJudge",
    "GradedParseError",
    "ImagePart",
    "ImagesRef",
    "Item",
    "ItemScore",
    "JudgeAdapter",
    "JudgeInput",
    "JudgeReplyError",
    "Judgment",
    "LevelRule",
    "LevelSpec",
    "Message",
    "OfflineMatchJudge",
    "PromptedJudge",
    "RecordError",
    "RecordReader",
    "ResponseSchema",
    "RunAnalysis",
    "RunJudge",
    "SampleDirectoryError",
    "SampleReport",
    "SamplerSettings",
    "ShortcutSolver",
    "Suite",
    "SuiteSettings",
    "TaskSpec",
    "TextPart",
    "VideoQASuite",
    "VideoRef",
    "check_preset",
    "claim_sample_dir",
    "describe_validation_error",
    "extract_answer",
    "frame_preset_setting",
    "judge_input_setting",
    "parse_scale_score",
    "read_json_release",
    "read_parquet_release",
    "sampling_setting",
    "scene_frame",
    "score_item",
    "setting",
    "text_id",
    "write_video",
]
