"""From stage outputs to the candidate directory (candidates_format.md), and nothing else.

Order of work: balanced letters per task (`assign_letters`), ids per task file (experiment order, then
time in the video), release records, then the files. Every file is written whole through a temporary
name and a rename, so a crash never leaves a half-written JSONL that the platform or `expvid eval`
would read. Clip files no record refers to any more (from an earlier run with other settings) are
removed, so the directory holds exactly what the records name.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.construction.drafts import DraftItem, SegmentRecord
from expvid.construction.state import write_atomic
from expvid.schema import AnswerType, Item
from expvid.suites.expvid_suite import EXPVID_TASKS, TASKS


@dataclass
class FinalItem:
    key: str  # "<task>/<id>"
    record: dict[str, Any]
    draft: DraftItem
    item: Item  # the same item as the evaluator loads it (for the audits)


def assign_letters(drafts: list[DraftItem], seed: int) -> list[DraftItem]:
    """Options A-D for balanced MCQs: per task, the correct positions are an equal share of A, B, C, D
    (as equal as the count allows) in a seeded random order; distractor order is shuffled too."""
    by_task: dict[str, list[int]] = {}
    for index, draft in enumerate(drafts):
        if draft.balanced:
            by_task.setdefault(draft.task, []).append(index)
    result = list(drafts)
    for task, indices in sorted(by_task.items()):
        rng = random.Random(f"{seed}:{task}:letters")
        positions = [k % 4 for k in range(len(indices))]
        rng.shuffle(positions)
        for index, position in zip(indices, positions, strict=True):
            order = [0, 1, 2]
            rng.shuffle(order)
            result[index] = drafts[index].with_letters(position, order)
    return result


def release_record(record_id: int, draft: DraftItem) -> dict[str, Any]:
    """The ExpVid release fields, in the release's order."""
    record: dict[str, Any] = {"id": record_id, "video_path": draft.clip.path, "question": draft.question}
    if draft.options is not None:
        record["options"] = draft.options
    record["answer"] = draft.answer
    record["asr_caption"] = draft.asr_caption
    record["video_id"] = draft.video_id
    record["category"] = draft.category
    return record


def as_item(key: str, record: dict[str, Any], task: str) -> Item:
    spec = TASKS[task]
    answer = record["answer"]
    if spec.answer_type is AnswerType.STEP_NUMBER:
        answer = int(answer)
    elif spec.answer_type is AnswerType.STEP_SEQUENCE:
        answer = [int(a) for a in answer]
    return Item(
        id=key,
        source_id=str(record["id"]),
        suite="expvid",
        task=task,
        level=spec.level,
        discipline=record["category"],
        question=record["question"],
        options=record.get("options"),
        answer=answer,
        answer_type=spec.answer_type,
        context=record["asr_caption"],
        meta={"video_id": record["video_id"]},
    )


def finalize(drafts: list[DraftItem], experiment_order: list[str], seed: int) -> list[FinalItem]:
    rank = {video_id: i for i, video_id in enumerate(experiment_order)}
    lettered = assign_letters(drafts, seed)
    finals: list[FinalItem] = []
    for spec in EXPVID_TASKS:
        task_drafts = sorted(
            (d for d in lettered if d.task == spec.name),
            key=lambda d: (rank.get(d.video_id, 1 << 30), d.order),
        )
        for record_id, draft in enumerate(task_drafts):
            record = release_record(record_id, draft)
            key = f"{spec.name}/{record_id}"
            finals.append(FinalItem(key, record, draft, as_item(key, record, spec.name)))
    return finals


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def write_candidates(
    out: Path,
    finals: list[FinalItem],
    *,
    flags: dict[str, list[dict[str, Any]]],
    segments: list[SegmentRecord],
    experiments: list[dict[str, Any]],
    papers: dict[str, str],
    source_videos: dict[str, str],
) -> None:
    for spec in EXPVID_TASKS:
        rows = [f.record for f in finals if f.draft.task == spec.name]
        path = out / spec.path
        if rows or path.exists():
            _jsonl(path, rows)
    provenance = []
    for final in finals:
        draft = final.draft
        line: dict[str, Any] = {
            "item": final.key,
            "task": draft.task,
            "video_id": draft.video_id,
            "source": draft.clip.source_record(source_videos[draft.video_id]),
            "drafts": draft.drafts,
            "flags": [*draft.flags, *flags.get(final.key, [])],
        }
        if draft.segment_id is not None:
            line["segment_id"] = draft.segment_id
        if draft.meta:
            line["meta"] = draft.meta
        provenance.append(line)
    _jsonl(out / "provenance.jsonl", provenance)
    members: dict[str, list[str]] = {}
    for final in finals:
        if final.draft.segment_id is not None:
            members.setdefault(final.draft.segment_id, []).append(final.key)
    rows = []
    for segment in segments:
        keys = members.get(segment.segment_id)
        if not keys:
            continue
        clip = segment.clip.path if (out / segment.clip.path).is_file() else None
        rows.append(
            {
                "segment_id": segment.segment_id,
                "video_id": segment.video_id,
                "clip": clip,
                "start": round(segment.clip.start, 3),
                "end": round(segment.clip.end, 3),
                "title": segment.title,
                "steps": [s.model_dump() for s in segment.steps],
                "full_step_list": segment.full_step_list,
                "items": keys,
            }
        )
    _jsonl(out / "segments.jsonl", rows)
    _jsonl(out / "experiments.jsonl", experiments)
    for video_id, markdown in papers.items():
        write_atomic(out / "papers" / f"{video_id}.md", markdown)
    keep = {f.draft.clip.path for f in finals} | {r["clip"] for r in rows if r["clip"]}
    _prune_clips(out, keep | {e["full_video"] for e in experiments if e.get("full_video")})


def _prune_clips(out: Path, keep: set[str]) -> None:
    videos = out / "videos"
    if not videos.is_dir():
        return
    for path in videos.rglob("*"):
        if path.is_file() and path.relative_to(out).as_posix() not in keep:
            path.unlink()
