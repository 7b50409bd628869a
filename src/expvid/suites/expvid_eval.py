"""ExpVid as the runner evaluates it: paper defaults, prompts, extraction and scoring wiring.

Defaults, each from the paper (review version 000, appendix F):
- F.2: uniform sampling, 8 frames for Level-1 clips, 32 for Level-2 segments; Level-3 uses the
  model's recommended or maximum frame count (Table 3: 96-512), so 128 is our default, `--frames
  L3=N` sets it and `-S frame_preset=MODEL` takes the paper's count for a Table 3 model; frames
  resized to 224x224 and sent as independent images on every backend (`--input-mode images`, the
  same input whatever runs the model); temperature 0.1; at most 8192 new tokens.
- F.4: prompts (see `expvid_prompts`).
- F.1: metrics (accuracy, Jaccard, per-blank accuracy), level averages as Table 2 computes them
  (`expvid.scoring.levels`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Unpack

from expvid.models.factory import create_backend
from expvid.models.types import AnswerHints
from expvid.schema import AnswerType, Item, Judgment
from expvid.schema.dataset import Dataset
from expvid.scoring import (
    EXPVID_LEVELS,
    BlankJudge,
    Extraction,
    LLMBlankJudge,
    OfflineBlankJudge,
    expvid_table2,
)
from expvid.scoring.judges.llm_blank import JudgeProtocol
from expvid.suites.expvid_prompts import build_prompt
from expvid.suites.expvid_suite import EXPVID_TASKS, load_expvid, record_to_item, task_spec
from expvid.suites.judge_adapter import JudgeAdapter
from expvid.suites.protocol import FrameOptions, GenerationDefaults, LoadOptions
from expvid.suites.records import RecordError
from expvid.suites.sample_report import SampleReport
from expvid.suites.settings import SuiteSettings, frame_preset_setting, setting
from expvid.suites.suite import Suite

#: F.2 frame budgets per level; Level 3 is per model in the paper (96-512), 128 here.
DEFAULT_FRAMES: dict[str, int] = {"L1": 8, "L2": 32, "L3": 128}

#: Table 3 (appendix F.3): each evaluated model's Level-3 frame count (L1 8 and L2 32 for all, F.2),
#: by the model's name in the table, lower-cased. `-S frame_preset=claude-sonnet-4` runs Claude as the
#: paper did (96 frames: under Anthropic's 100 images per request).
TABLE3_LEVEL3_FRAMES: dict[str, int] = {
    "gpt-5": 128,
    "gemini-2.5-flash": 128,
    "gemini-2.5-pro": 128,
    "claude-sonnet-4": 96,
    "seed1.5-vl": 256,
    "qwen2.5-vl-7b": 128,
    "qwen2.5-vl-72b": 128,
    "internvl3-8b": 256,
    "internvl3.5-8b": 256,
    "internvl3.5-38b": 256,
    "internvl3-78b": 256,
    "intern-s1-mini": 128,
    "intern-s1": 128,
    "keye-vl-8b-preview": 256,
    "keye-vl-1.5-8b": 256,
    "kimi-vl-a3b-thinking": 256,
    "mimo-vl-7b-rl": 512,
    "glm-4.1v-9b-thinking": 256,
    "glm-4.5v": 256,
}
#: Family names that are unambiguous in Table 3 (every member has the same Level-3 count).
PRESET_ALIASES: dict[str, str] = {
    "claude": "claude-sonnet-4",
    "gemini": "gemini-2.5-pro",
    "qwen2.5-vl": "qwen2.5-vl-7b",
    "internvl3": "internvl3-8b",
    "internvl3.5": "internvl3.5-8b",
    "keye-vl": "keye-vl-8b-preview",
    "kimi-vl": "kimi-vl-a3b-thinking",
    "mimo-vl": "mimo-vl-7b-rl",
    "seed-vl": "seed1.5-vl",
}


def frame_presets() -> dict[str, FrameOptions]:
    """Every preset name (Table 3 models and aliases) with its frame options."""
    presets = {
        name: FrameOptions(counts={"L1": DEFAULT_FRAMES["L1"], "L2": DEFAULT_FRAMES["L2"], "L3": level3})
        for name, level3 in TABLE3_LEVEL3_FRAMES.items()
    }
    presets.update({alias: presets[target] for alias, target in PRESET_ALIASES.items()})
    return presets


FRAME_PRESETS = frame_presets()


DEFAULT_SIZE = 224  # F.2: "resized to 224x224"
GENERATION = GenerationDefaults(temperature=0.1, max_tokens=8192, source="ExpVid appendix F.2")
#: Section 4 "Metrics": Level-3 blanks are judged by "a lightweight LLM (Phi-3-mini)". Used when only a
#: judge endpoint is given (`--judge-base-url`); the judge prompt is ours (the paper's is unpublished).
DEFAULT_JUDGE_MODEL = "microsoft/Phi-3-mini-4k-instruct"

_NUMBERED_LINE = re.compile(r"^\s*(\d+)\s*[.)]\s+\S", re.MULTILINE)


def step_numbers_in(question: str) -> list[int]:
    """Step numbers of the numbered list inside a question ("12. Add ..." lines), in order.

    The release's step_prediction lists have no "1." before their first step (formats.md), so
    when the list starts at 2, step 1 is added: it is the unnumbered first line.
    """
    numbers = [int(match) for match in _NUMBERED_LINE.findall(question)]
    if numbers and numbers[0] == 2:
        numbers.insert(0, 1)
    return list(dict.fromkeys(numbers))


class ExpVidSettings(SuiteSettings):
    """What may change in an ExpVid run besides the generic options."""

    with_asr: bool = setting(
        False,
        help="Add the narration (asr_caption) to the prompt: the paper's ASR ablation (off in its setting).",
        paper="ExpVid §5 (ablation with ASR text); F.4 prompts otherwise",
    )
    frame_preset: str | None = frame_preset_setting(
        "A Table 3 model's frame setting (L1 8, L2 32, L3 as the paper ran that model), e.g. claude-sonnet-4.",
        paper="ExpVid appendix F.3, Table 3",
    )
    judge_protocol: JudgeProtocol = setting(
        "per_item",
        help="How an LLM judge decides Level-3 blanks: per_blank (the paper's protocol: one request per blank) "
        "or per_item (expvid's: one request deciding an item's blanks). The offline judge decides blank by blank.",
        paper="ExpVid §4 Metrics ('comparing each predicted blank with the ground-truth answer')",
        scoring=True,
    )
    frame_presets = FRAME_PRESETS


class ExpVidSuite(Suite):
    """The ten ExpVid tasks under the paper's evaluation settings."""

    name = "expvid"
    title = "ExpVid: scientific-experiment video understanding (10 tasks, 3 levels)"
    tasks = EXPVID_TASKS
    levels = EXPVID_LEVELS
    generation = GENERATION
    default_judge_model = DEFAULT_JUDGE_MODEL
    hub_repo = "OpenGVLab/ExpVid"
    Settings = ExpVidSettings
    default_frames = DEFAULT_FRAMES
    default_resolution = (DEFAULT_SIZE, None)  # F.2: "resized to 224x224"
    frame_presets = FRAME_PRESETS
    #: The tasks of a package written by `expvid export lmms-eval` ("<prefix>_<task>").
    lmms_eval_tasks: ClassVar[dict[str, str | None]] = {spec.name: spec.name for spec in EXPVID_TASKS}
    #: One file per task: a run loads only the chosen tasks' files (the fingerprint still covers all).
    loads_chosen_tasks = True

    def load(self, root: Path, **options: Unpack[LoadOptions]) -> Dataset:
        return load_expvid(root, **options, fingerprint_all_files=True)

    def prompt_text(self, item: Item) -> str:
        return build_prompt(item, with_asr=self.settings.with_asr)

    def item_from_record(self, record: dict[str, Any], task: str | None, root: Path) -> Item:
        """A record, or an lmms-eval document (a row `datasets` made of it: a struct column fills
        absent option letters with None, a null caption is empty)."""
        if task is None:
            raise RecordError("an ExpVid record belongs to one task file; the lmms-eval task names none")
        record = dict(record)
        options = record.get("options")
        if isinstance(options, dict):
            record["options"] = {k: v for k, v in options.items() if v is not None}
        elif options is None:
            record.pop("options", None)
        if record.get("asr_caption") is None:
            record["asr_caption"] = ""
        return record_to_item(task_spec(task), record, Path(root).resolve())

    def hints(self, item: Item) -> AnswerHints:
        steps = None
        if item.answer_type in (AnswerType.STEP_NUMBER, AnswerType.STEP_SEQUENCE):
            steps = step_numbers_in(item.question) or None
        return AnswerHints(
            answer_type=item.answer_type, options=item.options, step_numbers=steps, n_blanks=item.n_blanks
        )

    def build_judge(self, spec: str | None, backend_options: dict[str, Any]) -> BlankJudgeAdapter:
        return build_blank_judge(spec, backend_options, protocol=self.settings.judge_protocol)

    def reference_rows(self) -> list[dict[str, Any]]:
        """Table 2 as published (both thinking settings where the paper lists two rows)."""
        rows = []
        for row in expvid_table2().rows:
            label = f"{row.model} (paper)" if row.think is None else f"{row.model} (paper, think={row.think})"
            rows.append({"label": label, "values": {**row.tasks, **row.levels}})
        return rows

    def hub_layout(self) -> Any:
        """The release's task files at their paths; each record's `video_path` is a repo path."""
        from expvid.suites.release_layout import TaskFilesLayout

        return TaskFilesLayout(self)

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        from expvid.suites.sample import make_sample

        summary = make_sample(directory, seed=seed, force=force)
        return SampleReport(
            root=summary.root,
            seconds=summary.seconds,
            counts=dict(summary.items),
            what=(
                f"{len(summary.experiments)} experiments in the release, {len(summary.rejected)} raw sources "
                f"for curation to reject, {summary.clips} video files"
            ),
        )


class BlankJudgeAdapter(JudgeAdapter):
    """Runs an ExpVid blank judge (LLM or offline) on the blanks extracted from a response."""

    inner: BlankJudge

    async def judge(self, item: Item, extraction: Extraction, response: str | None) -> Judgment:
        blanks = [str(b) for b in extraction.value] if isinstance(extraction.value, list) else []
        return await self.inner.judge(item, blanks)


def build_blank_judge(
    spec: str | None, backend_options: dict[str, Any], *, protocol: JudgeProtocol = "per_item"
) -> BlankJudgeAdapter:
    """Level-3 judge: an LLM judge behind any backend spec (the paper used Phi-3-mini), deciding per
    item or per blank (`protocol`), or, with no spec, the offline judge (normalised match + MiniLM
    similarity), labelled offline in reports."""
    if spec is None:
        return BlankJudgeAdapter(OfflineBlankJudge())
    backend = create_backend(spec, **backend_options)
    return BlankJudgeAdapter(LLMBlankJudge(backend, protocol=protocol))
