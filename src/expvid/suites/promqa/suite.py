"""ProMQA as the runner evaluates it: the recording prefix, the official prompt, the ternary judge.

Per example: frames at 1 fps from 0 to `end_time`, thinned from the end to the frame cap so the
last frame is always sent (`SamplerSettings(strategy="fps_keep_last")`); the official prompt with
the recipe as DOT; then a text-only judge (ProMQA's ternary-step prompt, or an offline stand-in
when no judge model is given) scores 0/1/2; score = mean x 50. Breakdowns by question type,
clean / noisy and answer source reproduce Tables 10, 15 and 16.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from expvid.models.factory import create_backend
from expvid.models.types import AnswerHints, ImagePart, Message, TextPart
from expvid.schema import AnswerType, Item, ItemScore, Judgment, SamplerSettings, VideoRef
from expvid.scoring import Extraction, extract_answer, needs_judge, score_item
from expvid.scoring.judges.offline_graded import OfflineTernaryJudge
from expvid.scoring.judges.ternary import PerformedStep, TernaryJudge
from expvid.suites.base import Dataset
from expvid.suites.chance import ChancePools
from expvid.suites.judge_adapter import JudgeAdapter, check_judge_input, judged_text
from expvid.suites.promqa.loader import load_promqa
from expvid.suites.promqa.prompts import build_prompt
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
    SAMPLING_FPS,
    SUITE,
    TASKS,
    answer_type_group,
)
from expvid.suites.protocol import FrameOptions, PromptOptions

JUDGE_SCALE = 2.0  # ternary 0/1/2; score = mean / 2 x 100 = mean x 50


@cache
def _reference() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("reference_table10.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def performed_steps(item: Item) -> list[PerformedStep]:
    """Previous steps then the current step, each with its ground-truth error tags."""
    records = [*item.meta.get("previous_steps", []), item.meta["current_step"]]
    return [PerformedStep.from_record(record) for record in records]


class ProMQAJudge(JudgeAdapter):
    """The runner's view of a ProMQA judge (LLM or offline): one 0/1/2 decision per answer.

    The judge reads the reply as the model wrote it, as the official evaluate.py does
    (`judge_input="raw"`), or the reply with its think blocks removed (`"stripped"`).
    """

    inner: TernaryJudge | OfflineTernaryJudge

    def __init__(self, inner: TernaryJudge | OfflineTernaryJudge, judge_input: str = "raw") -> None:
        super().__init__(inner)
        self.judge_input = check_judge_input(judge_input)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "judge_input": self.judge_input}

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment:
        prediction = judged_text(self.judge_input, extraction, response)
        return await self.inner.decide(
            item_id=item.id,
            task=item.task,
            activity=str(item.meta["activity_name"]),
            steps=performed_steps(item),
            question=item.question,
            gold_answers=[str(answer) for answer in item.answer],  # type: ignore[union-attr]
            prediction=prediction,
        )


class ProMQASuite:
    """401 open questions on cooking recordings with recipes, judged 0/1/2 by a text-only LLM."""

    name = SUITE
    #: The paper's judge model, used when only --judge-base-url is given.
    default_judge_model = "gpt-4o-2024-08-06"
    tasks = TASKS
    levels = LEVELS
    generation = GENERATION

    def __init__(self, **options: Any) -> None:
        judge_input = options.pop("judge_input", "raw")
        if options:
            raise ValueError(f"ProMQA takes no suite options but judge_input, got {sorted(options)}")
        self.judge_input = check_judge_input(str(judge_input))
        self._chance = ChancePools()

    def load(
        self,
        root: Path,
        *,
        tasks: Sequence[str] | None = None,
        strict: bool = False,
        check_media: bool = True,
    ) -> Dataset:
        dataset = load_promqa(root, tasks=tasks, strict=strict, check_media=check_media)
        self._chance = ChancePools.of(
            (item.task, item.id, [str(answer) for answer in item.answer])  # type: ignore[union-attr]
            for item in dataset.items
        )
        return dataset

    def validate_options(self, prompt: PromptOptions, frames: FrameOptions) -> None:
        if prompt.with_asr or prompt.variant:
            raise ValueError(
                "ProMQA has one prompt (the official one); --with-asr and --variant do not apply"
            )
        if frames.counts:
            raise ValueError("ProMQA samples at 1 fps up to a cap; use --max-frames N instead of --frames")

    def default_resolution(self) -> tuple[int | None, int | None]:
        """(size, max_side) when none is given: 765p (1360 px wide), Table 10's API-model setting."""
        return DEFAULT_RESOLUTION

    def frame_preset(self, name: str) -> FrameOptions:
        """A row of Tables 10 / 15: its frame cap and resolution (e.g. gpt-4o: 50 frames at 765p)."""
        try:
            return FRAME_PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown frame preset {name!r}; presets: {', '.join(FRAME_PRESETS)}") from None

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

    def prompt_text(self, item: Item, options: PromptOptions) -> str:
        return build_prompt(item)

    def messages(self, item: Item, images: Sequence[ImagePart], options: PromptOptions) -> list[Message]:
        """Text first, then the frames in time order: the order the official predict.py sends them."""
        return [Message(role="user", content=[TextPart(text=self.prompt_text(item, options)), *images])]

    def hints(self, item: Item) -> AnswerHints:
        """Free text; for chance baselines, the gold answers of the OTHER questions of its type."""
        return AnswerHints(
            answer_type=AnswerType.FREE_TEXT, chance_answers=self._chance.others(item.task, item.id)
        )

    def extract(self, response: str | None, item: Item) -> Extraction:
        return extract_answer(response, item)

    def needs_judge(self, item: Item, extraction: Extraction) -> bool:
        return needs_judge(item, extraction)

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> ItemScore:
        return score_item(item, extraction, judgment, graded_max=JUDGE_SCALE)

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> ProMQAJudge:
        """ProMQA's ternary LLM judge behind `spec` (the paper: openai:gpt-4o-2024-08-06), or offline."""
        if spec is None:
            return ProMQAJudge(OfflineTernaryJudge(), self.judge_input)
        return ProMQAJudge(TernaryJudge(create_backend(spec, **backend_options)), self.judge_input)

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
            {
                "name": "Error",
                "columns": [
                    {
                        "key": group,
                        "label": group,
                        "kind": "cell",
                        "path": ["breakdowns", "error", group, "levels", "Avg"],
                    }
                    for group in ERROR_GROUPS
                ],
            },
            {
                "name": "Question Type",
                "columns": [{"key": spec.name, "label": spec.column, "kind": "task"} for spec in TASKS],
            },
            {
                "name": "Answer Source",
                "columns": [
                    {
                        "key": f"src:{source}",
                        "label": source,
                        "kind": "cell",
                        "path": ["breakdowns", "answer_source", source, "levels", "Avg"],
                    }
                    for source in ANSWER_SOURCES
                ],
            },
            {
                "name": "Answer Type",
                "columns": [
                    {
                        "key": f"type:{group}",
                        "label": group,
                        "kind": "cell",
                        "path": ["breakdowns", "answer_type", group, "levels", "Avg"],
                    }
                    for group in ANSWER_TYPE_GROUPS
                ],
            },
        ]

    def reference_rows(self) -> list[dict[str, Any]]:
        data = _reference()
        columns = data["columns"]
        return [
            {"label": f"{row['label']} (paper)", "values": dict(zip(columns, row["values"], strict=True))}
            for row in data["rows"]
        ]
