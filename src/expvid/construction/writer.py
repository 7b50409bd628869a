"""From stage outputs to the candidate directory, and nothing else.

Every item is finalized on its own (`finalize_item`): its id (`<experiment_id>-<hash of its draft
key>`), its answer letter and option order (drawn from a hash of the seed, the experiment id and the
draft key) and its content hash depend on the item alone, never on its position among other items,
so adding, excluding or re-drafting one experiment leaves every other item exactly as it was (docs/
build.md, "Item identity"). Records are written in experiment then time order. Every file is written
whole through a temporary name and a rename, so a crash never leaves a half-written JSONL that the
platform or `expvid eval` would read. Clip files no record refers to any more (from an earlier run
with other settings) are removed, so the directory holds exactly what the records name.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.construction.drafts import DraftItem, SegmentRecord
from expvid.construction.state import write_atomic
from expvid.schema import AnswerType, Item
from expvid.suites.expvid_suite import EXPVID_TASKS, TASKS

#: Hex digits of the draft key's sha256 in an item id (48 bits: no collision within an experiment).
ID_HEX = 12


@dataclass
class FinalItem:
    key: str  # "<task>/<id>": the item's uid, stable across builds
    record: dict[str, Any]
    draft: DraftItem
    item: Item  # the same item as the evaluator loads it (for the audits)
    content_sha256: str = ""

    @property
    def uid(self) -> str:
        return self.key


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_id(video_id: str, draft_key: str) -> str:
    """The release id: `<experiment_id>-<first 12 hex of sha256(draft_key)>`."""
    if not draft_key:
        raise ValueError(f"{video_id}: an item draft without a draft key")
    return f"{video_id}-{_sha256(draft_key)[:ID_HEX]}"


def with_own_letters(draft: DraftItem, seed: int) -> DraftItem:
    """Options A-D for a four-option draft: the correct position and the distractor order are drawn
    from `sha256("<seed>|<experiment_id>|<draft_key>|letters")`, so each item's letter is its own
    (uniform over A-D across items; the report gives the per-task counts and a chi-square test)."""
    if not draft.balanced:
        return draft
    digest = _sha256(f"{seed}|{draft.video_id}|{draft.draft_key}|letters")
    slots = len(draft.distractors or []) + 1
    position = int(digest[:8], 16) % slots
    order = list(range(slots - 1))
    random.Random(digest).shuffle(order)
    return draft.with_letters(position, order)


def content_sha256(record: dict[str, Any], clip_key: str) -> str:
    """sha256 of what a reviewer sees: question, options, answer and the clip's content address."""
    payload = {
        "question": record["question"],
        "options": record.get("options"),
        "answer": record["answer"],
        "clip": clip_key,
    }
    return _sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


def release_record(record_id: str, draft: DraftItem) -> dict[str, Any]:
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


def finalize_item(draft: DraftItem, seed: int) -> FinalItem:
    """One draft as a release record with its id, letters and content hash (functions of the draft alone)."""
    lettered = with_own_letters(draft, seed)
    record_id = item_id(draft.video_id, draft.draft_key)
    record = release_record(record_id, lettered)
    key = f"{draft.task}/{record_id}"
    return FinalItem(
        key, record, lettered, as_item(key, record, draft.task), content_sha256(record, draft.clip.key)
    )


def finalize(
    drafts: list[DraftItem],
    experiment_order: list[str],
    seed: int,
    dropped: dict[str, dict[str, int]] | None = None,
) -> list[FinalItem]:
    """Every draft finalized on its own, in task, experiment and time order; a second draft with the
    same uid (the same draft key twice in one experiment) is dropped and counted in `dropped`."""
    rank = {video_id: i for i, video_id in enumerate(experiment_order)}
    finals: list[FinalItem] = []
    seen: set[str] = set()
    for spec in EXPVID_TASKS:
        task_drafts = sorted(
            (d for d in drafts if d.task == spec.name),
            key=lambda d: (rank.get(d.video_id, 1 << 30), d.video_id, d.order),
        )
        for draft in task_drafts:
            final = finalize_item(draft, seed)
            if final.key in seen:
                if dropped is not None:
                    reasons = dropped.setdefault(spec.name, {})
                    reasons["same draft key as another item of the experiment"] = (
                        reasons.get("same draft key as another item of the experiment", 0) + 1
                    )
                continue
            seen.add(final.key)
            finals.append(final)
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
    transcripts: dict[str, dict[str, Any]] | None = None,
    transcribed: dict[str, Path] | None = None,
) -> None:
    """Every file of the candidate directory. `transcripts`: each experiment's transcript provenance
    (a file of the folder, or speech-to-text's engine, model and language), on every provenance line
    so reviewers see where an item's narration came from; `transcribed`: the transcripts speech-to-text
    made, copied to `transcripts/<id>.json` (the narration the items were drafted from)."""
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
            "uid": final.key,
            "experiment_id": draft.video_id,
            "draft_key": draft.draft_key,
            "content_sha256": final.content_sha256,
            "task": draft.task,
            "video_id": draft.video_id,
            "source": draft.clip.source_record(source_videos[draft.video_id]),
            "drafts": draft.drafts,
            "flags": [*draft.flags, *flags.get(final.key, [])],
        }
        if transcripts and transcripts.get(draft.video_id):
            line["transcript"] = transcripts[draft.video_id]
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
    made = {f"{video_id}.json": path for video_id, path in (transcribed or {}).items()}
    for name, path in made.items():
        write_atomic(out / "transcripts" / name, path.read_text(encoding="utf-8"))
    if (out / "transcripts").is_dir():  # an experiment no longer kept, or given a transcript file since
        for stale in (out / "transcripts").glob("*.json"):
            if stale.name not in made:
                stale.unlink()
    keep = {f.draft.clip.path for f in finals} | {r["clip"] for r in rows if r["clip"]}
    _prune_clips(out, keep | {e["full_video"] for e in experiments if e.get("full_video")})


def _prune_clips(out: Path, keep: set[str]) -> None:
    videos = out / "videos"
    if not videos.is_dir():
        return
    for path in videos.rglob("*"):
        if path.is_file() and path.relative_to(out).as_posix() not in keep:
            path.unlink()
