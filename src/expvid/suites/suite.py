"""`Suite`: the base class of every suite, with the protocol's optional parts written once.

A suite states what its paper fixes as class attributes (tasks, levels, decoding defaults, frame
budgets, resolution, presets, judge model, Hub repo, reference rows) and overrides only what is its
own: how its release loads and how an item becomes a prompt. Everything else has a default here
that the four published suites shared before it was written once:

- settings: `Settings` (a `SuiteSettings` model) validated on construction, kept as `self.settings`;
- frames: `resolve_frames` (a `frame_preset` setting, the paper's resolution, checks of `--frames`
  keys), `frame_count` (per task, per level "L1", or "all", else `default_frames`) and `sampler`
  (N frames at segment midpoints, or spread with linspace when a `sampling` setting says
  "official"; or `--fps` with its caps);
- prompts and answers: images first then the text (`messages`), answer hints for the offline
  baselines (option letters, or other items' gold answers as a chance baseline), strict extraction,
  judging only what needs it, scoring with the judge's scale (`judge_scale`);
- report: `reference_rows` from a JSON file beside the suite (`reference_file`), and no analyses
  across runs (`run_analyses`).

`expvid.suites.videoqa.VideoQASuite` builds on it for the common case: multiple-choice and open
questions about videos in one JSON release file, open answers judged by an LLM.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Unpack

from expvid.models.types import AnswerHints, ImagePart, Message, TextPart
from expvid.schema import AnswerType, Item, ItemScore, Judgment, SamplerSettings, VideoRef
from expvid.schema.dataset import Dataset, TaskSpec
from expvid.scoring import Extraction, extract_answer, needs_judge, score_item
from expvid.scoring.levels import LevelSpec
from expvid.suites.analyses import RunAnalysis
from expvid.suites.chance import ChancePools
from expvid.suites.protocol import (
    JUDGED_ANSWER_TYPES,
    FrameOptions,
    GenerationDefaults,
    LoadOptions,
    RunJudge,
    apply_preset,
    resolution_given,
)
from expvid.suites.records import RecordError
from expvid.suites.settings import SuiteSettings
from expvid.suites.shortcuts import ShortcutSolver


class Suite:
    """Base class of a suite (see the module docstring for what it provides)."""

    #: Registry name (also `Item.suite` and the entry-point name).
    name: ClassVar[str]
    #: One line for `expvid suites list`: the benchmark and its paper.
    title: ClassVar[str] = ""
    tasks: ClassVar[tuple[TaskSpec, ...]]
    levels: ClassVar[tuple[LevelSpec, ...]]
    generation: ClassVar[GenerationDefaults]
    Settings: ClassVar[type[SuiteSettings]] = SuiteSettings
    #: The paper's judge model, used when only `--judge-base-url` is given (None: `--judge` needed).
    default_judge_model: ClassVar[str | None] = None
    #: Top of the judge's scale for judged free-text items (a ternary judge 2, a 0-10 judge 10, a
    #: binary judge 1); human judgements compared with the judge are grades of this scale.
    judge_scale: ClassVar[float | None] = None
    #: Hub dataset of the published release (`expvid data fetch NAME`, `--data hf:REPO`).
    hub_repo: ClassVar[str | None] = None
    #: Frames per item when `--frames` gives none: keyed by task, "L<level>" or "all".
    default_frames: ClassVar[Mapping[str, int]] = {"all": 8}
    #: (size, max_side) of the frames when the user gives neither (`--size` squashes to a square,
    #: `--max-side` caps the longest side). The default is neutral: the source size, (None, None).
    #: A paper that fixes a resolution says so (ExpVid: (224, None), F.2's 224x224 squash).
    default_resolution: ClassVar[tuple[int | None, int | None] | None] = (None, None)
    #: A paper's per-model frame settings, by name (chosen with the `frame_preset` setting).
    frame_presets: ClassVar[Mapping[str, FrameOptions]] = {}
    #: JSON file beside the suite's module: {"columns": [...], "rows": [{"label", "values"}]}.
    reference_file: ClassVar[str | None] = None
    #: lmms-eval tasks whose logs `expvid score --from lmms-eval` reads: the task's name (or its last
    #: part after a package prefix) -> the expvid task, or None when one lmms-eval task holds them all.
    lmms_eval_tasks: ClassVar[Mapping[str, str | None]] = {}
    #: Options every multiple-choice item of a task has (by task, or "all"), for `expvid audit`'s
    #: count check; where none is given the audit compares each item with its task's usual count.
    option_counts: ClassVar[Mapping[str, int]] = {}

    def __init__(self, settings: SuiteSettings | Mapping[str, Any] | None = None) -> None:
        self.settings: Any = self.Settings.parse(settings, suite=self.name)
        self._chance = ChancePools()

    # -- data ---------------------------------------------------------------------------------------

    def load(self, root: Path, **options: Unpack[LoadOptions]) -> Dataset:
        raise NotImplementedError(f"{type(self).__name__} must implement load()")

    def remember_chance_answers(self, dataset: Dataset, group: str = "task") -> None:
        """Pool every item's gold answers by task (or by `item.meta[group]`) for the chance baseline."""
        self._chance = ChancePools.of(
            (item.task if group == "task" else str(item.meta.get(group)), item.id, _gold_texts(item))
            for item in dataset.items
            if item.answer_type is AnswerType.FREE_TEXT
        )

    def task_of(self, record: dict[str, Any]) -> str | None:
        """The task of a release record, where one file holds several tasks (None: unknown)."""
        return None

    def item_from_record(self, record: dict[str, Any], task: str | None, root: Path) -> Item:
        """One release record (an lmms-eval document) as an item of `task`; `RecordError` if it is none."""
        raise RecordError(f"the {self.name} suite does not read single records")

    def lmms_eval_item_id(self, metrics: dict[str, Any]) -> str | None:
        """The item id a logged lmms-eval metric value carries, when the suite's lmms-eval task logs one."""
        return None

    # -- frames -------------------------------------------------------------------------------------

    def frame_preset(self, name: str) -> FrameOptions:
        """A paper row's frame setting by name (case-insensitive); `ValueError` listing the presets."""
        for key, preset in self.frame_presets.items():
            if key.lower() == name.strip().lower():
                return preset
        listing = ", ".join(self.frame_presets) or "none"
        raise ValueError(f"unknown frame preset {name!r} for {self.name}; presets: {listing}")

    def resolve_frames(self, frames: FrameOptions) -> FrameOptions:
        preset = getattr(self.settings, "frame_preset", None)
        if preset:
            frames = apply_preset(frames, self.frame_preset(str(preset)))
        if self.default_resolution is not None and not resolution_given(frames):
            size, max_side = self.default_resolution
            frames = frames.model_copy(update={"size": size, "max_side": max_side})
        self.check_frames(frames)
        return frames

    def check_frames(self, frames: FrameOptions) -> None:
        """Refuse `--frames` keys that name nothing of this suite (a typo would otherwise be ignored)."""
        known = {"all", *(spec.name for spec in self.tasks)}
        known |= {f"L{spec.level}" for spec in self.tasks if spec.level is not None}
        unknown = sorted(set(frames.counts) - known)
        if unknown:
            raise ValueError(f"--frames keys for {self.name} are {', '.join(sorted(known))}; got {unknown}")

    def frame_count(self, item: Item, frames: FrameOptions) -> int:
        """Frames for one item: per task, per level, for all, else the paper's default."""
        keys = [item.task, *([f"L{item.level}"] if item.level is not None else []), "all"]
        count = next((frames.counts[key] for key in keys if key in frames.counts), None)
        if count is None:
            count = next((self.default_frames[key] for key in keys if key in self.default_frames), 8)
        return count if frames.max_images is None else min(count, frames.max_images)

    def sampler(self, item: Item, frames: FrameOptions) -> SamplerSettings | None:
        if not isinstance(item.media, VideoRef):
            return None
        output = {
            "size": frames.size,
            "max_side": frames.max_side,
            "image_format": frames.image_format,
            "jpeg_quality": frames.jpeg_quality,
        }
        if frames.fps is not None:
            caps = [cap for cap in (frames.max_frames, frames.max_images) if cap is not None]
            return SamplerSettings(
                strategy="fps", fps=frames.fps, max_frames=min(caps) if caps else None, **output
            )
        # A `sampling` setting "official" spreads the frames as lmms-eval and the papers' code do.
        spacing = "linspace" if getattr(self.settings, "sampling", None) == "official" else "uniform"
        return SamplerSettings(strategy=spacing, num_frames=self.frame_count(item, frames), **output)

    # -- prompts and answers ------------------------------------------------------------------------

    def generation_defaults(self) -> GenerationDefaults:
        return self.generation

    def prompt_text(self, item: Item) -> str:
        raise NotImplementedError(f"{type(self).__name__} must implement prompt_text()")

    def messages(self, item: Item, images: Sequence[ImagePart]) -> list[Message]:
        """One user message: the images in time order, then the prompt text."""
        return [Message(role="user", content=[*images, TextPart(text=self.prompt_text(item))])]

    def hints(self, item: Item) -> AnswerHints:
        """Option letters for a choice; for free text, the gold answers of OTHER items of its task;
        and the prompt's sentences about images reworded for captions (`caption_rewrites`)."""
        rewrites = dict(self.caption_rewrites())
        if item.answer_type is AnswerType.CHOICE:
            return AnswerHints(answer_type=AnswerType.CHOICE, options=item.options, caption_rewrites=rewrites)
        return AnswerHints(
            answer_type=item.answer_type,
            chance_answers=self._chance.others(item.task, item.id),
            caption_rewrites=rewrites,
        )

    def caption_rewrites(self) -> Mapping[str, str]:
        """Sentences of this suite's prompts that tell the model it is shown images, each with what a
        model given captions of the frames instead reads in its place (the answerer of a
        `socratic:CAPTIONER+ANSWERER` pipeline). Verbatim prompts keep their wording for every other
        model; a suite whose prompt speaks of images lists those sentences here."""
        return {}

    def extract(self, response: str | None, item: Item) -> Extraction:
        return extract_answer(response, item)

    def needs_judge(self, item: Item, extraction: Extraction) -> bool:
        return needs_judge(item, extraction)

    def may_need_judge(self, item: Item) -> bool:
        """Whether this item's answer can go to the judge (so a run of it builds one): by default
        blanks and free text. A suite whose judge also decides other answers says so here."""
        return item.answer_type in JUDGED_ANSWER_TYPES

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> ItemScore:
        return score_item(item, extraction, judgment, graded_max=self.judge_scale)

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> RunJudge | None:
        return None

    # -- audit --------------------------------------------------------------------------------------

    def shortcut_solvers(self) -> Sequence[ShortcutSolver]:
        """Text-only solvers of this suite's own for `expvid audit` (`expvid.suites.shortcuts`)."""
        return ()

    # -- report -------------------------------------------------------------------------------------

    def reference_rows(self) -> list[dict[str, Any]]:
        """The paper's rows, from `reference_file` ("label (paper)" and column -> value)."""
        if self.reference_file is None:
            return []
        data = self.reference_data()
        columns = data["columns"]
        return [
            {"label": f"{row['label']} (paper)", "values": dict(zip(columns, row["values"], strict=True))}
            for row in data["rows"]
        ]

    def run_analyses(self) -> Mapping[str, RunAnalysis]:
        """Tables the paper computes across several runs (`expvid report RUNS --analysis NAME`)."""
        return {}

    def reference_data(self) -> dict[str, Any]:
        """The parsed `reference_file` (read from the package the suite's class lives in)."""
        package = sys.modules[type(self).__module__].__package__ or type(self).__module__
        text = resources.files(package).joinpath(str(self.reference_file)).read_text(encoding="utf-8")
        data: dict[str, Any] = json.loads(text)
        return data


def _gold_texts(item: Item) -> list[str]:
    answer = item.answer
    return [str(value) for value in answer] if isinstance(answer, list) else [str(answer)]
