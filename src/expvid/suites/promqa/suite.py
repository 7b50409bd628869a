"""ProMQA as the runner evaluates it: the recording prefix, the official prompt, the ternary judge.

Per example: frames at 1 fps from 0 to `end_time`, thinned from the end to the frame cap so the
last frame is always sent (`SamplerSettings(strategy="fps_keep_last")`); the official prompt with
the recipe as DOT; then a text-only judge (ProMQA's ternary-step prompt, or an offline stand-in
when no judge model is given) scores 0/1/2; score = mean x 50. Breakdowns by question type,
clean / noisy and answer source reproduce Tables 10, 15 and 16.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Unpack

from expvid.models.factory import create_backend
from expvid.models.types import ImagePart, Message, TextPart
from expvid.schema import Item, Judgment, SamplerSettings, VideoRef
from expvid.schema.dataset import Dataset
from expvid.scoring import Extraction
from expvid.suites.analyses import RunAnalysis
from expvid.suites.judge_adapter import JudgeAdapter, JudgeInput, judge_input_setting
from expvid.suites.promqa.judge import PerformedStep, TernaryJudge
from expvid.suites.promqa.loader import load_promqa
from expvid.suites.promqa.offline_judge import OfflineTernaryJudge
from expvid.suites.promqa.prompts import build_prompt, caption_rewrites
from expvid.suites.promqa.spec import (
    ANSWER_SOURCES,
    ANSWER_TYPE_GROUPS,
    ANSWER_TYPES,
    DEFAULT_MAX_FRAMES,
    DEFAULT_RESOLUTION,
    ERROR_GROUPS,
    FRAME_PRESETS,
    GENERATION,
    LEVELS,
    PROMQA_RELEASE,
    SAMPLING_FPS,
    SUITE,
    TASKS,
    answer_type_group,
)
from expvid.suites.protocol import FrameOptions, LoadOptions
from expvid.suites.sample_report import SampleReport
from expvid.suites.settings import SuiteSettings, frame_preset_setting, setting
from expvid.suites.suite import Suite

JUDGE_SCALE = 2.0  # ternary 0/1/2; score = mean / 2 x 100 = mean x 50


class ProMQASettings(SuiteSettings):
    """What may change in a ProMQA run besides the generic options."""

    frame_preset: str | None = frame_preset_setting(
        "A Table 10 / 15 row's frame cap and resolution, e.g. gpt-4o (50 frames, 765p), qwen2-vl, llava-1.5.",
        paper="ProMQA Tables 10 and 15; script/preprocess/video.sh",
    )
    judge_input: JudgeInput = judge_input_setting(
        "What the judge reads: the reply as written (raw, as the official evaluate.py), or without its "
        "think blocks (stripped, for reasoning models)."
    )
    human_judgments: Path | None = setting(
        None,
        help="JSONL {id, score 0/1/2} (or a JSON object id -> score) of human judgements: adds the judge's "
        "agreement with people to scores.json.",
        paper="ProMQA §4.2 (judge agreement, Tables 8-9)",
        scoring=True,
    )
    frame_presets = FRAME_PRESETS


def performed_steps(item: Item) -> list[PerformedStep]:
    """Previous steps then the current step, each with its ground-truth error tags."""
    records = [*item.meta.get("previous_steps", []), item.meta["current_step"]]
    return [PerformedStep.from_record(record) for record in records]


def _breakdown_group(name: str, dimension: str, groups: Sequence[str], key: str = "{}") -> dict[str, Any]:
    """A table group with one column per group of a breakdown (its "Avg"), keyed `key.format(group)`."""
    columns = [
        {
            "key": key.format(group),
            "label": group,
            "kind": "cell",
            "path": ["breakdowns", dimension, group, "levels", "Avg"],
        }
        for group in groups
    ]
    return {"name": name, "columns": columns}


class ProMQAJudge(JudgeAdapter):
    """The runner's view of a ProMQA judge (LLM or offline): one 0/1/2 decision per answer.

    The judge reads the reply as the model wrote it, as the official evaluate.py does
    (`judge_input="raw"`), or the reply with its think blocks removed (`"stripped"`).
    """

    inner: TernaryJudge | OfflineTernaryJudge

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment:
        prediction = self.prediction(extraction, response)
        return await self.inner.decide(
            item_id=item.id,
            task=item.task,
            activity=str(item.meta["activity_name"]),
            steps=performed_steps(item),
            question=item.question,
            gold_answers=[str(answer) for answer in item.answer],  # type: ignore[union-attr]
            prediction=prediction,
        )


class ProMQASuite(Suite):
    """401 open questions on cooking recordings with recipes, judged 0/1/2 by a text-only LLM."""

    name = SUITE
    title = "ProMQA: procedural mistake questions on cooking recordings, judged 0/1/2"
    #: The paper's judge model, used when only --judge-base-url is given.
    default_judge_model = "gpt-4o-2024-08-06"
    tasks = TASKS
    levels = LEVELS
    generation = GENERATION
    judge_scale = JUDGE_SCALE
    default_resolution = DEFAULT_RESOLUTION  # 765p (1360 px wide), Table 10's API-model setting
    frame_presets = FRAME_PRESETS
    reference_file = "reference_table10.json"
    Settings = ProMQASettings
    #: ProMQA's QA files come from the authors' GitHub repository, not the Hub (`expvid data fetch`).
    github_release = PROMQA_RELEASE
    settings: ProMQASettings

    def load(self, root: Path, **options: Unpack[LoadOptions]) -> Dataset:
        dataset = load_promqa(root, **options)
        self.remember_chance_answers(dataset)
        return dataset

    @property
    def human_judgments(self) -> Path | None:
        return self.settings.human_judgments

    def check_frames(self, frames: FrameOptions) -> None:
        if frames.counts:
            raise ValueError("ProMQA samples at 1 fps up to a cap; use --max-frames N instead of --frames")

    def sampler(self, item: Item, frames: FrameOptions) -> SamplerSettings | None:
        if not isinstance(item.media, VideoRef):
            return None
        caps = [c for c in (frames.max_frames, frames.max_images) if c is not None]
        return SamplerSettings(
            strategy="fps_keep_last",
            fps=frames.fps if frames.fps is not None else SAMPLING_FPS,
            max_frames=min(caps) if caps else DEFAULT_MAX_FRAMES,
            size=frames.size,
            max_side=frames.max_side,
            image_format=frames.image_format,
            jpeg_quality=frames.jpeg_quality,
        )

    def prompt_text(self, item: Item) -> str:
        return build_prompt(item)

    def caption_rewrites(self) -> dict[str, str]:
        """The prompt's sentence about images, reworded for a model given captions (section 4.1's
        Socratic model: `socratic:CAPTIONER+ANSWERER`)."""
        return dict(caption_rewrites())

    def messages(self, item: Item, images: Sequence[ImagePart]) -> list[Message]:
        """Text first, then the frames in time order: the order the official predict.py sends them."""
        return [Message(role="user", content=[TextPart(text=self.prompt_text(item)), *images])]

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> ProMQAJudge:
        """ProMQA's ternary LLM judge behind `spec` (the paper: openai:gpt-4o-2024-08-06), or offline."""
        judge_input = self.settings.judge_input
        if spec is None:
            return ProMQAJudge(OfflineTernaryJudge(), judge_input)
        return ProMQAJudge(TernaryJudge(create_backend(spec, **backend_options)), judge_input)

    def groups(self, item: Item) -> dict[str, str]:
        """Breakdown keys: clean / noisy (Tables 10, 15), answer source (Tables 11, 16) and, when the
        examples carry `answer_types` (an expvid export with labelled answers), answer type."""
        keys = {
            "error": "noisy" if item.meta.get("is_noisy") else "clean",
            "answer_source": item.meta["answer_source"],
        }
        types = item.meta.get("answer_types")
        if isinstance(types, list) and types and all(t in ANSWER_TYPES for t in types):
            keys["answer_type"] = answer_type_group(types)
        return keys

    def table_layout(self) -> list[dict[str, Any]]:
        return [
            {"name": "All", "columns": [{"key": "Avg", "label": "Avg.", "kind": "level"}]},
            _breakdown_group("Error", "error", ERROR_GROUPS),
            {
                "name": "Question Type",
                "columns": [{"key": spec.name, "label": spec.column, "kind": "task"} for spec in TASKS],
            },
            _breakdown_group("Answer Source", "answer_source", ANSWER_SOURCES, key="src:{}"),
            _breakdown_group("Answer Type", "answer_type", ANSWER_TYPE_GROUPS, key="type:{}"),
        ]

    def run_analyses(self) -> dict[str, RunAnalysis]:
        from expvid.suites.promqa.analyses import ANALYSES

        return dict(ANALYSES)

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        from expvid.suites.promqa.sample import make_promqa_sample

        return make_promqa_sample(directory, seed, force=force)
