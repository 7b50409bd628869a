"""SciVideoBench as the runner evaluates it: sampling, prompts, strict and official extraction, Table 2.

The headline score uses strict extraction (a letter only when the reply states one; otherwise the
item is unparseable and scores 0). The official lmms-eval reading (first capital letter after the
listed prefixes, a random letter when there is none) is computed beside it as the extraction mode
"official" on the same replies; scores.json holds both and lists the items where they differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from expvid.models.types import AnswerHints, ImagePart, Message, TextPart
from expvid.schema import AnswerType, Item, ItemScore, Judgment, SamplerSettings, VideoRef
from expvid.scoring import Extraction, extract_answer, score_item
from expvid.scoring.official_choice import MODE_NAME, extract_official
from expvid.suites.base import Dataset
from expvid.suites.protocol import FrameOptions, GenerationDefaults, PromptOptions
from expvid.suites.scivideobench.loader import load_scivideobench
from expvid.suites.scivideobench.prompts import build_prompt, check_variant, cot_template
from expvid.suites.scivideobench.spec import (
    DEFAULT_FRAMES,
    DEFAULT_RESOLUTION,
    DISCIPLINES,
    FRAME_PRESETS,
    GENERATION,
    GENERATION_COT,
    LEVELS,
    PRESET_POST_PROMPTS,
    SUITE,
    TASKS,
)

#: Table 2 prints two decimals.
TABLE_FORMAT = ".2f"

ExtractionMode = Callable[[str | None, Item, int], Extraction]


@cache
def _reference() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("reference_table2.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


class SciVideoBenchSuite:
    """1,000 ten-option questions on 241 JoVE videos, evaluated as the official lmms-eval task does."""

    name = SUITE
    tasks = TASKS
    levels = LEVELS
    generation = GENERATION

    def __init__(self, **options: Any) -> None:
        if "judge_input" in options:
            raise ValueError("SciVideoBench has no judge (answers are letters); --judge-input does not apply")
        if options:
            raise ValueError(f"SciVideoBench takes no suite options, got {sorted(options)}")

    def load(
        self,
        root: Path,
        *,
        tasks: Sequence[str] | None = None,
        strict: bool = False,
        check_media: bool = True,
    ) -> Dataset:
        return load_scivideobench(root, tasks=tasks, strict=strict, check_media=check_media)

    def validate_options(self, prompt: PromptOptions, frames: FrameOptions) -> None:
        if prompt.with_asr:
            raise ValueError("SciVideoBench has no narration in its release; --with-asr does not apply")
        check_variant(prompt.variant)
        unknown = sorted(set(frames.counts) - {"all", *(spec.name for spec in TASKS)})
        if unknown:
            raise ValueError(f"--frames keys for SciVideoBench are 'all' or a question type, got {unknown}")

    def generation_for(self, prompt: PromptOptions) -> GenerationDefaults:
        return GENERATION_COT if cot_template(prompt.variant) is not None else GENERATION

    def default_resolution(self) -> tuple[int | None, int | None]:
        """(size, max_side) when none is given: the source size, each model's "native processing"."""
        return DEFAULT_RESOLUTION

    def frame_preset(self, name: str) -> FrameOptions:
        try:
            return FRAME_PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown frame preset {name!r}; presets: {', '.join(FRAME_PRESETS)}") from None

    def prompt_preset(self, name: str) -> dict[str, Any]:
        """The prompt variant lmms-eval gives the preset's model (gpt-4o: the gpt4v post prompt)."""
        post = PRESET_POST_PROMPTS.get(name)
        return {"post_prompt": post} if post is not None else {}

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
            caps = [c for c in (frames.max_frames, frames.max_images) if c is not None]
            return SamplerSettings(
                strategy="fps", fps=frames.fps, max_frames=min(caps) if caps else None, **output
            )
        count = frames.counts.get(item.task, frames.counts.get("all", DEFAULT_FRAMES))
        if frames.max_images is not None:
            count = min(count, frames.max_images)
        return SamplerSettings(strategy="uniform", num_frames=count, **output)

    def prompt_text(self, item: Item, options: PromptOptions) -> str:
        return build_prompt(item, options.variant)

    def messages(self, item: Item, images: Sequence[ImagePart], options: PromptOptions) -> list[Message]:
        return [Message(role="user", content=[*images, TextPart(text=self.prompt_text(item, options))])]

    def hints(self, item: Item) -> AnswerHints:
        return AnswerHints(answer_type=AnswerType.CHOICE, options=item.options)

    def extract(self, response: str | None, item: Item) -> Extraction:
        return extract_answer(response, item)

    def needs_judge(self, item: Item, extraction: Extraction) -> bool:
        return False

    def score(self, item: Item, extraction: Extraction, judgment: Judgment | None) -> ItemScore:
        return score_item(item, extraction, judgment)

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> None:
        return None

    def extraction_modes(self) -> dict[str, ExtractionMode]:
        """Other readings of the same replies, scored beside the strict one."""
        return {MODE_NAME: extract_official}

    def table_layout(self) -> list[dict[str, Any]]:
        """Table 2: Overall | question types | disciplines (raw disciplines mapped in `spec.py`)."""
        return [
            {
                "name": "All",
                "columns": [{"key": "Overall", "label": "Overall", "kind": "level", "fmt": TABLE_FORMAT}],
            },
            {
                "name": "Question Type",
                "columns": [
                    {"key": spec.name, "label": spec.column, "kind": "task", "fmt": TABLE_FORMAT}
                    for spec in TASKS
                ],
            },
            {
                "name": "Discipline",
                "columns": [
                    {
                        "key": discipline,
                        "label": discipline,
                        "kind": "cell",
                        "path": ["disciplines", discipline, "levels", "Overall"],
                        "fmt": TABLE_FORMAT,
                    }
                    for discipline in DISCIPLINES
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
