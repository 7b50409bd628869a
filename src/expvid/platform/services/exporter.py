"""`expvid platform export DIR`: write the verified items as an ExpVid-layout benchmark.

Only verified items are written, in the release layout (candidates_format.md), so `expvid eval
--data DIR` reads the export like the published release. Videos are copied (hard-linked when the
file system allows) under names that reveal nothing (`clip_<hash>.mp4`: the release's own names,
such as `..._removed_step_2.mp4`, contain answers). Alongside: `provenance.jsonl` (drafts, flags and
the verification trail of each item), `segments.jsonl` and `experiments.jsonl` with the verified step
lists, `papers/`, `agreement.json` and `verification.json` (counts, when, from where).

The directory is written under a temporary name and renamed at the end, so a failed export never
leaves a half-written benchmark that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from expvid.platform.db.engine import Database
from expvid.platform.db.models import (
    Adjudication,
    Decision,
    Experiment,
    ImportBatch,
    Item,
    Segment,
    User,
    utc_now,
)
from expvid.platform.services import audit
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.reports import agreement_report, progress
from expvid.platform.services.tasks import TASKS, annotation_file


class ExportError(RuntimeError):
    pass


@dataclass
class ExportReport:
    out: Path
    items: Counter[str] = field(default_factory=Counter)
    videos: int = 0

    @property
    def total(self) -> int:
        return sum(self.items.values())


def _opaque_name(batch_id: int, relative: str, level: int, video_id: str) -> str:
    digest = hashlib.sha256(f"{batch_id}:{relative}".encode()).hexdigest()[:16]
    suffix = PurePosixPath(relative).suffix or ".mp4"
    return f"videos/level_{level}/{video_id}/clip_{digest}{suffix}"


def _place(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _safe_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def export_verified(database: Database, out: Path, *, actor: Actor = SYSTEM) -> ExportReport:
    """Write every verified item to `out` (which must not exist yet, or be empty)."""
    out = out.resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} exists and is not empty; export into a new directory")
    staging = out.parent / f".{out.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    report = ExportReport(out=out)
    try:
        with database.read() as db:
            _write_export(db, staging, report, database.url)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    with database.write() as db:
        audit.record(
            db, actor, "export.completed", entity="export", entity_id=str(out),
            after={"items": dict(report.items), "videos": report.videos},
        )  # fmt: skip
    return report


def _write_export(db: Session, staging: Path, report: ExportReport, database_url: str) -> None:
    roots = {b.id: Path(b.root) for b in db.scalars(select(ImportBatch))}
    users = {u.id: u.username for u in db.scalars(select(User))}
    items = list(db.scalars(select(Item).where(Item.state == "verified").order_by(Item.task, Item.id)))
    present_tasks = {task for (task,) in db.execute(select(Item.task).distinct())}
    placed: dict[tuple[int, str], str] = {}

    def place(batch_id: int, relative: str | None, level: int, video_id: str) -> str | None:
        if not relative:
            return None
        key = (batch_id, relative)
        if key not in placed:
            source = roots[batch_id] / relative
            if not source.is_file():
                raise ExportError(f"video {source} is missing; cannot export")
            target = _opaque_name(batch_id, relative, level, video_id)
            _place(source, staging / target)
            placed[key] = target
        return placed[key]

    decisions: dict[int, list[Decision]] = defaultdict(list)
    for decision in db.scalars(select(Decision).where(Decision.stale.is_(False)).order_by(Decision.id)):
        decisions[decision.item_id].append(decision)
    adjudications: dict[int, Adjudication] = {}
    for call in db.scalars(select(Adjudication).order_by(Adjudication.id)):
        adjudications[call.item_id] = call  # the latest call wins

    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    provenance: list[dict[str, Any]] = []
    exported_by_segment: dict[int, list[str]] = defaultdict(list)
    video_ids: set[str] = set()
    for item in items:
        record = dict(item.record)
        record["question"] = item.question
        record["answer"] = item.answer
        if item.options is not None or "options" in record:
            record["options"] = item.options
        record["video_path"] = place(item.batch_id, item.video_path, item.level, item.video_id)
        records[item.task].append(record)
        report.items[item.task] += 1
        video_ids.add(item.video_id)
        if item.segment_id is not None:
            exported_by_segment[item.segment_id].append(item.key)
        adjudication = adjudications.get(item.id)
        provenance.append(
            {
                **item.provenance,
                "item": item.key,
                "task": item.task,
                "video_id": item.video_id,
                "imported_from": str(roots[item.batch_id]),
                "original_video_path": item.video_path,
                "verification": {
                    "state": item.state,
                    "settled_via": item.settled_via,
                    "settled_at": item.settled_at.isoformat() if item.settled_at else None,
                    "version": item.version,
                    "edited": _edited(item),
                    "judgements": [
                        {
                            "annotator": users.get(d.user_id),
                            "verdict": d.verdict,
                            "justification": d.justification,
                            "minutes": None if d.seconds_spent is None else round(d.seconds_spent / 60, 2),
                        }
                        for d in decisions.get(item.id, [])
                    ],
                    "adjudication": None
                    if adjudication is None
                    else {
                        "adjudicator": users.get(adjudication.user_id),
                        "outcome": adjudication.outcome,
                        "justification": adjudication.justification,
                        "matched_judgements": len(adjudication.matched_decisions or []),
                    },
                },
            }
        )
    for task in TASKS:
        if task in present_tasks:
            _write_jsonl(annotation_file(staging, task), records.get(task, []))
    _write_jsonl(staging / "provenance.jsonl", provenance)

    segments_out = []
    for segment in db.scalars(
        select(Segment).where(Segment.id.in_(list(exported_by_segment))).order_by(Segment.id)
    ):
        experiment = db.get(Experiment, segment.experiment_id)
        assert experiment is not None  # foreign key
        clip = None
        if segment.clip and (roots[experiment.batch_id] / segment.clip).is_file():
            clip = place(experiment.batch_id, segment.clip, 2, experiment.video_id)
        segments_out.append(
            {
                "segment_id": segment.segment_key,
                "video_id": experiment.video_id,
                "clip": clip,
                "start": segment.start,
                "end": segment.end,
                "steps": segment.steps,
                "full_step_list": experiment.full_steps,
                "items": exported_by_segment[segment.id],
                "original_steps": segment.original_steps,
            }
        )
    if segments_out:
        _write_jsonl(staging / "segments.jsonl", segments_out)

    experiments_out = []
    for experiment in db.scalars(
        select(Experiment).where(Experiment.video_id.in_(sorted(video_ids))).order_by(Experiment.video_id)
    ):
        full_video = None
        if experiment.full_video and (roots[experiment.batch_id] / experiment.full_video).is_file():
            full_video = place(experiment.batch_id, experiment.full_video, 3, experiment.video_id)
        experiments_out.append(
            {
                "video_id": experiment.video_id,
                "title": experiment.title,
                "discipline": experiment.discipline,
                "duration": experiment.duration,
                "full_video": full_video,
            }
        )
        if experiment.paper_md:
            paper = staging / "papers" / f"{experiment.video_id}.md"
            paper.parent.mkdir(parents=True, exist_ok=True)
            paper.write_text(experiment.paper_md, encoding="utf-8")
    if experiments_out:
        _write_jsonl(staging / "experiments.jsonl", experiments_out)

    (staging / "agreement.json").write_text(json.dumps(agreement_report(db).as_dict(), indent=2) + "\n")
    state = progress(db)
    manifest = {
        "format": "expvid-release",
        "exported_at": utc_now().isoformat(),
        "items": dict(sorted(report.items.items())),
        "total_items": report.total,
        "platform_states": state.totals,
        "sources": [str(root) for root in roots.values()],
        "database": _safe_url(database_url),
    }
    (staging / "verification.json").write_text(json.dumps(manifest, indent=2) + "\n")
    report.videos = len(placed)


def _edited(item: Item) -> bool:
    """Whether the verified content differs from the imported draft (options compared as text)."""
    record = item.record
    options = record.get("options")
    as_text = {k: str(v) for k, v in options.items()} if isinstance(options, dict) else None
    return (
        record.get("question") != item.question
        or record.get("answer") != item.answer
        or as_text != item.options
    )
