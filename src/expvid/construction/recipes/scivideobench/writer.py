"""The candidate directory in SciVideoBench's published layout, plus expvid's sidecars.

    scivideobench_1k.jsonl     video_id, question_id, question, options (A-J), answer, question_type,
                               video_duration, discipline, subject (the release's fields and order)
    videos/jove_<video_id>.mp4 the experiment video (hard link or copy of the source; .mkv kept)
    provenance.jsonl           per item: uid, experiment_id, draft_key, content_sha256, question_id,
                               every role's draft (model, prompt sha256, raw reply), the evaluator's
                               answer and rationale, the comparer's cues with times, overlay
                               suggestions, audit flags, the transcript's provenance
    experiments.jsonl, papers/<video_id>.md, transcripts/<video_id>.json (the narration used)
    sources/<video_id>/video.*  the source videos provenance refers to

`expvid eval --suite scivideobench --data DIR` reads it as the published release. Records are
ordered by (video_id, question_type, question_id): content, not generation order.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from expvid.construction.context import link_or_copy
from expvid.construction.recipes.scivideobench.drafts import SvbDraft
from expvid.construction.recipes.scivideobench.inputs import Experiment
from expvid.construction.state import write_atomic

RELEASE_FILE = "scivideobench_1k.jsonl"


def release_video_name(experiment: Experiment) -> str:
    suffix = (
        ".mkv" if experiment.source.video and experiment.source.video.suffix.lower() == ".mkv" else ".mp4"
    )
    return f"videos/jove_{experiment.video_id}{suffix}"


def record(draft: SvbDraft, experiment: Experiment) -> dict[str, Any]:
    options, answer = draft.options()
    row: dict[str, Any] = {
        "video_id": draft.video_id,
        "question_id": draft.question_id,
        "question": draft.question,
        "options": options,
        "answer": answer,
        "question_type": draft.question_type,
        "video_duration": round(experiment.duration, 3),
        "discipline": experiment.discipline,
    }
    if experiment.subject:
        row["subject"] = experiment.subject
    return row


def content_sha256(row: dict[str, Any]) -> str:
    payload = json.dumps([row["question"], row["options"], row["answer"]], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def provenance(
    draft: SvbDraft,
    row: dict[str, Any],
    experiment: Experiment,
    flags: list[dict[str, Any]],
    blind: dict[str, Any] | None,
) -> dict[str, Any]:
    source = experiment.source.video
    return {
        "uid": draft.uid,
        "item": f"{draft.task}/{draft.video_id}/{draft.question_id}",
        "recipe": "scivideobench",
        "experiment_id": draft.video_id,
        "video_id": draft.video_id,
        "question_id": draft.question_id,
        "task": draft.task,
        "draft_key": draft.draft_key,
        "content_sha256": content_sha256(row),
        "source": {
            "video": f"sources/{draft.video_id}/video{source.suffix.lower() if source else '.mp4'}",
            "start": 0.0,
            "end": round(experiment.duration, 3),
        },
        "transcript": experiment.transcript_provenance,
        "generated_question": draft.generated_question,
        "evidence": draft.evidence,
        "quantity": draft.quantity,
        "evaluator": draft.evaluation,
        "evaluator_after_refiner": draft.recheck,
        "visual_cues": (draft.comparison or {}).get("cues", []),
        "overlay_suggestions": draft.overlay_suggestions(),
        "drafts": draft.drafts,
        "flags": flags,
        "blind": blind,
    }


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def write_release(
    out: Path,
    drafts: list[SvbDraft],
    experiments: dict[str, Experiment],
    flags: dict[str, list[dict[str, Any]]],
    blind: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """Write every file; returns the records."""
    ordered = sorted(drafts, key=lambda d: (d.video_id, d.task, d.question_id))
    rows, lines = [], []
    for draft in ordered:
        experiment = experiments[draft.video_id]
        row = record(draft, experiment)
        rows.append(row)
        lines.append(provenance(draft, row, experiment, flags.get(draft.uid, []), blind.get(draft.uid)))
    _jsonl(out / RELEASE_FILE, rows)
    _jsonl(out / "provenance.jsonl", lines)
    used = {d.video_id for d in ordered}
    experiment_rows = []
    for video_id in sorted(used):
        experiment = experiments[video_id]
        assert experiment.source.video is not None
        release = out / release_video_name(experiment)
        if not release.is_file() or release.stat().st_size != experiment.source.video.stat().st_size:
            link_or_copy(experiment.source.video, release)
        source = out / f"sources/{video_id}/video{experiment.source.video.suffix.lower()}"
        if not source.is_file():
            link_or_copy(experiment.source.video, source)
        write_atomic(out / "papers" / f"{video_id}.md", experiment.paper)
        if experiment.transcript_path is not None:
            (out / "transcripts").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(
                experiment.transcript_path,
                out / "transcripts" / f"{video_id}{experiment.transcript_path.suffix}",
            )
        experiment_rows.append(
            {
                "video_id": video_id,
                "title": experiment.source.title,
                "discipline": experiment.discipline,
                "discipline_label": experiment.source.discipline,
                "subject": experiment.subject,
                "duration": round(experiment.duration, 3),
                "full_video": release_video_name(experiment),
                "source_video": f"sources/{video_id}/video{experiment.source.video.suffix.lower()}",
                "transcript": experiment.transcript_provenance,
            }
        )
    _jsonl(out / "experiments.jsonl", experiment_rows)
    videos = out / "videos"
    if videos.is_dir():  # a video no item uses any more (an experiment dropped since) goes
        keep = {release_video_name(experiments[v]) for v in used}
        for path in videos.iterdir():
            if path.is_file() and f"videos/{path.name}" not in keep:
                path.unlink()
    return rows
