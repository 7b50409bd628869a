"""The release writer: turn drafts into ExpVid records and write the annotation files.

Records carry exactly the release's fields, in its order: id, video_path, question, options (MCQ
tasks only), answer, asr_caption, video_id, category. Ids count from 0 within each file (they are
only unique per file in the release too). Output is byte-deterministic for a seed: fixed key
order, `ensure_ascii=False` (full-width commas stay as written), "\\n" line ends.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.schema import OPTION_LETTERS
from expvid.suites.expvid_suite import EXPVID_TASKS, TASKS
from expvid.suites.sample.level1 import level1_drafts
from expvid.suites.sample.level2 import level2_drafts
from expvid.suites.sample.level3 import level3_drafts
from expvid.suites.sample.plan import ClipSpec, Draft, PlannedExperiment

#: Every n-th item of a task (offset 2) gets an empty `asr_caption`, as some release records have.
EMPTY_CAPTION_EVERY = 5


@dataclass
class ReleasePlan:
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    clips: list[ClipSpec] = field(default_factory=list)

    def clips_for(self, video_id: str) -> list[ClipSpec]:
        return [clip for clip in self.clips if clip.video_id == video_id]


def plan_release(experiments: Sequence[PlannedExperiment], seed: int) -> ReleasePlan:
    """All records and clips for the kept experiments, in experiment order."""
    drafts: dict[str, list[Draft]] = {spec.name: [] for spec in EXPVID_TASKS}
    clips: dict[str, ClipSpec] = {}
    for experiment in experiments:
        parts = [
            level1_drafts(experiment, seed),
            level2_drafts(experiment, seed, prediction_index=len(drafts["step_prediction"])),
            level3_drafts(experiment, seed),
        ]
        for new_drafts, new_clips in parts:
            for draft in new_drafts:
                drafts[draft.task].append(draft)
            for clip in new_clips:
                clips.setdefault(clip.path, clip)
    plan = ReleasePlan(clips=list(clips.values()))
    for task, task_drafts in drafts.items():
        _assign_letters(task_drafts, random.Random(f"{seed}:{task}:letters"))
        plan.records[task] = [_record(index, draft) for index, draft in enumerate(task_drafts)]
    return plan


def write_annotations(root: Path, plan: ReleasePlan) -> None:
    for task, records in plan.records.items():
        path = root / TASKS[task].path
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(record, ensure_ascii=False) for record in records]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")


def _assign_letters(drafts: list[Draft], rng: random.Random) -> None:
    """Options A-D with the correct letter balanced across positions over the whole task."""
    pending = [draft for draft in drafts if draft.correct is not None]
    positions = [index % 4 for index in range(len(pending))]
    rng.shuffle(positions)
    for draft, position in zip(pending, positions, strict=True):
        assert draft.correct is not None and len(draft.distractors) == 3
        texts = list(draft.distractors)
        rng.shuffle(texts)
        texts.insert(position, draft.correct)
        draft.options = dict(zip(OPTION_LETTERS, texts, strict=False))
        draft.answer = OPTION_LETTERS[position]


def _record(index: int, draft: Draft) -> dict[str, Any]:
    record: dict[str, Any] = {"id": index, "video_path": draft.video_path, "question": draft.question}
    if draft.options is not None:
        record["options"] = draft.options
    record["answer"] = draft.answer
    record["asr_caption"] = "" if index % EMPTY_CAPTION_EVERY == 2 else draft.asr_caption
    record["video_id"] = draft.video_id
    record["category"] = draft.category
    return record
