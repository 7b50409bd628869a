"""SciVideoBench as the runner evaluates it: sampling, prompts, strict and official extraction, Table 2.

The headline score uses strict extraction (a letter only when the reply states one; otherwise the
item is unparseable and scores 0). The official lmms-eval reading (first capital letter after the
listed prefixes, a random letter when there is none) is computed beside it as the extraction mode
"official" on the same replies; scores.json holds both and lists the items where they differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Unpack

from pydantic import field_validator, model_validator

from expvid.schema import Item
from expvid.schema.dataset import Dataset
from expvid.scoring import Extraction
from expvid.suites.protocol import GenerationDefaults, LoadOptions
from expvid.suites.sample_report import SampleReport
from expvid.suites.scivideobench.loader import record_to_item
from expvid.suites.scivideobench.official_extraction import MODE_NAME, extract_official
from expvid.suites.scivideobench.prompts import build_prompt
from expvid.suites.scivideobench.spec import (
    DEFAULT_FRAMES,
    DEFAULT_RESOLUTION,
    DISCIPLINES,
    FRAME_PRESETS,
    GENERATION,
    GENERATION_COT,
    LEVELS,
    PRESET_POST_PROMPTS,
    QUESTION_TYPES,
    RELEASE_FILES,
    SUITE,
    TASKS,
)
from expvid.suites.settings import SuiteSettings, frame_preset_setting, sampling_setting, setting
from expvid.suites.videoqa import VideoQASuite

#: Table 2 prints two decimals.
TABLE_FORMAT = ".2f"

ExtractionMode = Callable[[str | None, Item, int], Extraction]
_YES = ("true", "yes", "on", "1")
_NO = ("false", "no", "off", "0")


class SciVideoBenchSettings(SuiteSettings):
    """What may change in a SciVideoBench run besides the generic options."""

    cot: Literal["off", "official", "mmvu"] = setting(
        "off",
        help="Chain of thought: the task file's post_prompt_cot (official, also `true`), MMVU's multiple-choice "
        "CoT template (mmvu), or none (off: the direct prompt). CoT gets 1024 new tokens.",
        paper="SciVideoBench §3.8; scivideobench.yaml post_prompt_cot",
    )
    post_prompt: Literal["default", "gpt4v", "llava_vid"] | None = setting(
        None,
        help="The post prompt of a model family, as lmms-eval picks it by model; unset: the one the frame "
        "preset's model gets (gpt-4o: gpt4v), else default. Not with cot.",
        paper="scivideobench.yaml lmms_eval_specific_kwargs",
    )
    keep_times: bool = setting(
        False,
        help="Send the question's mm:ss times as written instead of the official 'frame N' rewrite.",
        paper="official scivideobench_doc_to_text (the rewrite)",
    )
    frame_preset: str | None = frame_preset_setting(
        "A §3.2 / Table 6 model's frames (gemini 1 fps, gpt-4o 256, qwen2.5-vl 768, ...) at the source size.",
        paper="SciVideoBench §3.2, Table 6",
    )
    sampling: Literal["official", "strict"] = sampling_setting(
        "lmms-eval's video readers: np.linspace(0, n - 1, N, dtype=int)"
    )
    frame_presets = FRAME_PRESETS

    @classmethod
    def upgrade(cls, recorded: dict[str, Any]) -> dict[str, Any]:
        """Runs made before `sampling` existed took the midpoints of N segments (strict)."""
        return {"sampling": "strict", **recorded}

    @field_validator("cot", mode="before")
    @classmethod
    def _cot_switch(cls, value: Any) -> Any:
        """`cot=true` (the old `--variant cot`) is the task's own template; false is off."""
        if value is True or (isinstance(value, str) and value.strip().lower() in _YES):
            return "official"
        if value is False or value is None or (isinstance(value, str) and value.strip().lower() in _NO):
            return "off"
        return value

    @model_validator(mode="after")
    def _post_prompt(self) -> SciVideoBenchSettings:
        if self.cot != "off" and self.post_prompt is not None:
            raise ValueError("cot replaces the post prompt; give cot or post_prompt, not both")
        if self.cot == "off" and self.post_prompt is None:  # resolved: what is sent, recorded as such
            implied = PRESET_POST_PROMPTS.get((self.frame_preset or "").lower(), "default")
            object.__setattr__(self, "post_prompt", implied)
        return self


class SciVideoBenchSuite(VideoQASuite):
    """1,000 ten-option questions on 241 JoVE videos, evaluated as the official lmms-eval task does."""

    name = SUITE
    title = "SciVideoBench: ten-option questions on research-grade JoVE experiment videos"
    hub_repo = "groundmore/scivideobench"
    tasks = TASKS
    levels = LEVELS
    generation = GENERATION
    default_frames: ClassVar[Mapping[str, int]] = {"all": DEFAULT_FRAMES}
    default_resolution = DEFAULT_RESOLUTION  # the source size, each model's "native processing"
    frame_presets = FRAME_PRESETS
    reference_file = "reference_table2.json"
    release_files = RELEASE_FILES
    id_field = "question_id"
    #: `(video_id, question_id)` repeats across question types in the release (formats.md).
    duplicate_key = "(video_id, question_id, question_type)"
    #: The official lmms-eval task (one task for the three question types).
    lmms_eval_tasks: ClassVar[dict[str, str | None]] = {"scivideobench": None}
    Settings = SciVideoBenchSettings
    settings: SciVideoBenchSettings

    def task_of(self, record: dict[str, Any]) -> str | None:
        raw = record.get("question_type")
        return QUESTION_TYPES.get(raw) if isinstance(raw, str) else None

    def record_to_item(self, record: dict[str, Any], root: Path) -> Item:
        return record_to_item(record, root)

    def generation_defaults(self) -> GenerationDefaults:
        return GENERATION_COT if self.settings.cot != "off" else GENERATION

    def prompt_text(self, item: Item) -> str:
        return build_prompt(
            item,
            cot=self.settings.cot,
            post_prompt=self.settings.post_prompt,
            keep_times=self.settings.keep_times,
        )

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

    def hub_layout(self) -> Any:
        from expvid.suites.scivideobench.release import SciVideoBenchLayout

        return SciVideoBenchLayout(self.load)

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        from expvid.suites.scivideobench.sample import make_scivideobench_sample

        return make_scivideobench_sample(directory, seed, force=force)


def load_scivideobench(root: Path | str, **options: Unpack[LoadOptions]) -> Dataset:
    """Load the release at `root`; `tasks` selects question types (conceptual, hypothetical, quantitative).

    Every record becomes an item or an invalid record (counted in its question type when that is
    readable); a missing video leaves the item in place (scored as a media failure when run).
    """
    return SciVideoBenchSuite().load(Path(root), **options)
