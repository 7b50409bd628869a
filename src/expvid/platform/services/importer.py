"""`expvid platform import DIR`: load a candidate directory (ExpVid release layout + sidecars).

Everything is validated before anything is written: a bad line is reported as `file:line: problem`
and, by default, nothing is imported until the directory is fixed (`skip_bad=True` imports the good
records and reports the rest). Importing the same directory again is safe: items already present are
left alone (the platform's reviewed version wins); records that differ from what was imported are
listed as changed upstream so that nobody's review work is silently overwritten.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.engine import Database
from expvid.platform.db.models import Experiment, ImportBatch, Item, Segment, User, utc_now
from expvid.platform.services import audit
from expvid.platform.services.assignment import AssignmentReport, assign_pending
from expvid.platform.services.content import Content, content_problems
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.scivideobench import SVB_LEVEL, svb_records
from expvid.platform.services.tasks import TASKS, annotation_file
from expvid.schema import DataError, RecordProblem, read_jsonl


@dataclass
class ParsedItem:
    key: str
    task: str
    record: dict[str, Any]
    provenance: dict[str, Any]
    segment_key: str | None
    fingerprint: str


@dataclass
class ParsedSegment:
    key: str
    video_id: str
    record: dict[str, Any]


@dataclass
class ImportReport:
    root: Path
    batch_id: int | None = None
    imported: Counter[str] = field(default_factory=Counter)
    unchanged: int = 0
    changed_upstream: list[str] = field(default_factory=list)
    problems: list[RecordProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    experiments: int = 0
    segments: int = 0
    assignment: AssignmentReport | None = None

    @property
    def total_imported(self) -> int:
        return sum(self.imported.values())


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _inside(root: Path, relative: str) -> Path | None:
    """The file `relative` names under `root`, or None if it escapes the root."""
    if not relative or Path(relative).is_absolute():
        return None
    path = (root / relative).resolve()
    return path if path.is_relative_to(root) else None


def _read_sidecar(path: Path, problems: list[RecordProblem]) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        return []
    good = []
    for line, value in read_jsonl(path):
        if isinstance(value, RecordProblem):
            problems.append(value)
        else:
            good.append((line, value))
    return good


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def parse_directory(
    root: Path,
) -> tuple[list[ParsedItem], dict[str, ParsedSegment], dict[str, Any], ImportReport]:
    """Read and check a candidate directory without touching the database."""
    root = root.resolve()
    report = ImportReport(root=root)
    problems = report.problems
    if not root.is_dir():
        raise DataError(f"{root}: not a directory")
    files = {task: annotation_file(root, task) for task in TASKS}
    present = {task: path for task, path in files.items() if path.is_file()}
    if not present:
        raise DataError(f"{root}: no annotation files (expected annotations/level1/materials.jsonl etc.)")

    provenance: dict[str, tuple[Path, int, dict[str, Any]]] = {}
    prov_path = root / "provenance.jsonl"
    for line, value in _read_sidecar(prov_path, problems):
        key = value.get("item")
        if not isinstance(key, str) or "/" not in key:
            problems.append(RecordProblem(prov_path, line, "missing 'item' (\"<task>/<id>\")"))
        elif key in provenance:
            problems.append(RecordProblem(prov_path, line, f"item {key} appears twice"))
        else:
            provenance[key] = (prov_path, line, value)

    segments: dict[str, ParsedSegment] = {}
    full_lists: dict[str, tuple[list[str], str]] = {}
    seg_path = root / "segments.jsonl"
    for line, value in _read_sidecar(seg_path, problems):
        key, video_id = value.get("segment_id"), _text(value.get("video_id"))
        steps, full = value.get("steps"), value.get("full_step_list")
        bad: list[str] = []
        if not isinstance(key, str) or not key:
            bad.append("missing 'segment_id'")
        if video_id is None:
            bad.append("missing 'video_id'")
        if not isinstance(full, list) or not all(isinstance(s, str) and s.strip() for s in full):
            bad.append("'full_step_list' must be a list of step texts")
            full = []
        if not isinstance(steps, list) or not steps:
            bad.append("'steps' must be a non-empty list")
            steps = []
        for i, step in enumerate(steps, start=1):
            number = step.get("number") if isinstance(step, dict) else None
            if not isinstance(number, int) or not 1 <= number <= len(full):
                bad.append(f"step {i}: 'number' must be a step of full_step_list (1-{len(full)})")
            elif not isinstance(step.get("text"), str) or not step["text"].strip():
                bad.append(f"step {i}: 'text' is missing")
        numbers: list[int] = [
            s["number"] for s in steps if isinstance(s, dict) and isinstance(s.get("number"), int)
        ]
        if any(b <= a for a, b in itertools.pairwise(numbers)):
            bad.append("step numbers must be increasing")
        if isinstance(key, str) and key in segments:
            bad.append(f"segment {key} appears twice")
        if video_id is not None and full:
            known = full_lists.get(video_id)
            if known is not None and known[0] != full:
                bad.append(f"full_step_list differs from the one given for {video_id} at {known[1]}")
            full_lists.setdefault(video_id, (list(full), f"{seg_path.name}:{line}"))
        if bad:
            problems.extend(RecordProblem(seg_path, line, message) for message in bad)
            continue
        assert isinstance(key, str) and video_id is not None
        segments[key] = ParsedSegment(key=key, video_id=video_id, record=value)
    item_to_segment = {
        item_key: seg.key for seg in segments.values() for item_key in seg.record.get("items", []) or []
    }

    items: list[ParsedItem] = []
    seen: set[str] = set()
    for task, path in present.items():
        spec = TASKS[task]
        for line, raw in svb_records(root, task) if spec.level == SVB_LEVEL else read_jsonl(path):
            if isinstance(raw, RecordProblem):
                problems.append(raw)
                continue
            value = raw
            bad = []
            source_id = _text(value.get("id"))
            if source_id is None:
                bad.append("missing 'id'")
            video_path = value.get("video_path")
            if not isinstance(video_path, str) or _inside(root, video_path) is None:
                bad.append(f"'video_path' must be a path inside {root}")
            elif not (root / video_path).is_file():
                bad.append(f"video file not found: {video_path}")
            if not isinstance(value.get("question"), str):
                bad.append("missing 'question'")
            if _text(value.get("video_id")) is None:
                bad.append("missing 'video_id'")
            if not isinstance(value.get("category"), str) or not value["category"].strip():
                bad.append("missing 'category' (the discipline)")
            if "answer" not in value:
                bad.append("missing 'answer'")
            options = value.get("options")
            if options is not None and not (
                isinstance(options, dict) and all(isinstance(v, str | int) for v in options.values())
            ):
                bad.append("'options' must map letters to texts")
            if spec.kind == "mcq" and not isinstance(options, dict):
                bad.append(f"{spec.title} records need 'options'")
            if not bad:
                options_text = {k: str(v) for k, v in options.items()} if isinstance(options, dict) else None
                bad.extend(content_problems(task, Content(value["question"], options_text, value["answer"])))
            key = f"{task}/{source_id}"
            if source_id is not None and key in seen:
                bad.append(f"id {source_id} appears twice in {path.name}")
            if bad:
                problems.extend(RecordProblem(path, line, message) for message in bad)
                continue
            seen.add(key)
            prov = provenance.get(key, (prov_path, 0, {}))[2]
            segment_key = prov.get("segment_id") or item_to_segment.get(key)
            if spec.level == 2 and segment_key is not None and segment_key not in segments:
                problems.append(
                    RecordProblem(path, line, f"segment {segment_key!r} is not in segments.jsonl")
                )
                continue
            if spec.level != 2:
                segment_key = None
            items.append(
                ParsedItem(
                    key=key,
                    task=task,
                    record=value,
                    provenance=prov,
                    segment_key=segment_key,
                    fingerprint=_fingerprint(value, prov),
                )
            )
    for key, (path, line, _) in provenance.items():
        if key not in seen:
            report.warnings.append(f"{path}:{line}: provenance for an item that was not imported: {key}")

    experiments: dict[str, Any] = {}
    exp_path = root / "experiments.jsonl"
    for line, value in _read_sidecar(exp_path, problems):
        video_id = _text(value.get("video_id"))
        if video_id is None:
            problems.append(RecordProblem(exp_path, line, "missing 'video_id'"))
            continue
        experiments[video_id] = value
    return items, segments, experiments, report


def _creator(user_ids: dict[str, int], provenance: dict[str, Any]) -> tuple[str | None, int | None]:
    """Who drafted an item: an explicit `created_by` user name, else the last drafting model."""
    name = provenance.get("created_by")
    if not isinstance(name, str):
        drafts = provenance.get("drafts") or []
        models = [d.get("model") for d in drafts if isinstance(d, dict) and isinstance(d.get("model"), str)]
        name = models[-1] if models else None
    return name, (user_ids.get(name) if name else None)


def _ensure_experiment(
    db: Session, cache: dict[str, Experiment], video_id: str, batch: ImportBatch, info: dict[str, Any],
    root: Path, segments: dict[str, ParsedSegment], report: ImportReport,
) -> Experiment:  # fmt: skip
    if video_id in cache:
        return cache[video_id]
    experiment = db.scalar(select(Experiment).where(Experiment.video_id == video_id))
    if experiment is None:
        paper = root / "papers" / f"{video_id}.md"
        full = next(
            (list(s.record["full_step_list"]) for s in segments.values() if s.video_id == video_id), []
        )
        experiment = Experiment(
            video_id=video_id,
            batch_id=batch.id,
            title=info.get("title"),
            discipline=info.get("discipline"),
            duration=info.get("duration"),
            full_video=info.get("full_video") if isinstance(info.get("full_video"), str) else None,
            paper_md=paper.read_text(encoding="utf-8") if paper.is_file() else None,
            full_steps=full,
            steps_version=1,
        )
        db.add(experiment)
        db.flush()
        report.experiments += 1
    cache[video_id] = experiment
    return experiment


def import_candidates(
    database: Database, root: Path, *, actor: Actor = SYSTEM, skip_bad: bool = False, assign: bool = True
) -> ImportReport:
    """Import a candidate directory; raises `DataError` listing every bad line unless `skip_bad`.

    A ProMQA candidate directory (`expvid build --recipe promqa`) is imported as procedural items
    (`procedural_import.py`)."""
    from expvid.platform.services.procedural_import import import_procedural, is_procedural_dir

    if is_procedural_dir(Path(root)):
        return import_procedural(database, Path(root), actor=actor, skip_bad=skip_bad, assign=assign)
    items, segments, experiments_info, report = parse_directory(root)
    root = report.root
    if report.problems and not skip_bad:
        raise DataError(report.problems)
    with database.write() as db:
        batch = ImportBatch(root=str(root), imported_by=actor.name, imported_at=utc_now(), summary={})
        db.add(batch)
        db.flush()
        report.batch_id = batch.id
        existing: dict[str, Any] = {}
        existing_prov: dict[str, Any] = {}
        if items:
            for key, record, provenance in db.execute(select(Item.key, Item.record, Item.provenance)):
                existing[key], existing_prov[key] = record, provenance
        experiment_cache: dict[str, Experiment] = {}
        segment_rows: dict[str, Segment] = {}
        new_rows: list[Item] = []
        user_ids = {name: uid for uid, name in db.execute(select(User.id, User.username))}
        for item in items:
            if item.key in existing:
                if _fingerprint(existing[item.key], existing_prov.get(item.key, {})) == item.fingerprint:
                    report.unchanged += 1
                else:
                    report.changed_upstream.append(item.key)
                continue
            record = item.record
            video_id = str(record["video_id"])
            experiment = _ensure_experiment(
                db,
                experiment_cache,
                video_id,
                batch,
                experiments_info.get(video_id, {}),
                root,
                segments,
                report,
            )
            if experiment.discipline is None:
                experiment.discipline = record["category"]
            segment_id = None
            if item.segment_key is not None:
                segment = segment_rows.get(item.segment_key) or db.scalar(
                    select(Segment).where(Segment.segment_key == item.segment_key)
                )
                if segment is None:
                    parsed = segments[item.segment_key].record
                    steps = [
                        {
                            "number": s["number"],
                            "text": s["text"],
                            "start": s.get("start"),
                            "end": s.get("end"),
                        }
                        for s in parsed["steps"]
                    ]
                    segment = Segment(
                        segment_key=item.segment_key,
                        experiment_id=experiment.id,
                        clip=parsed.get("clip"),
                        start=parsed.get("start"),
                        end=parsed.get("end"),
                        steps=steps,
                        original_steps=steps,
                    )
                    db.add(segment)
                    db.flush()
                    report.segments += 1
                segment_rows[item.segment_key] = segment
                segment_id = segment.id
            raw_source = item.provenance.get("source")
            source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
            source_video = source.get("video") if isinstance(source.get("video"), str) else None
            if source_video is not None and (
                _inside(root, source_video) is None or not (root / source_video).is_file()
            ):
                report.warnings.append(
                    f"{item.key}: source video {source_video} not found; the clip file is shown"
                )
                source_video = None
            creator, creator_id = _creator(user_ids, item.provenance)
            flags = [f for f in item.provenance.get("flags", []) or [] if isinstance(f, dict)]
            options = record.get("options")
            row = Item(
                key=item.key,
                task=item.task,
                level=TASKS[item.task].level,
                discipline=str(record["category"]).strip(),
                video_id=video_id,
                batch_id=batch.id,
                experiment_id=experiment.id,
                segment_id=segment_id,
                video_path=record["video_path"],
                source_video=source_video,
                window_start=_float(source.get("start")) if source_video else None,
                window_end=_float(source.get("end")) if source_video else None,
                question=record["question"],
                options={k: str(v) for k, v in options.items()} if isinstance(options, dict) else None,
                answer=record["answer"],
                asr_caption=record.get("asr_caption") or "",
                record=record,
                provenance=item.provenance,
                flags=flags,
                created_by_user_id=creator_id,
                creator=creator,
                state="pending",
                version=1,
                created_at=utc_now(),
                updated_at=utc_now(),
            )
            db.add(row)
            new_rows.append(row)
            report.imported[item.task] += 1
        db.flush()  # one batched INSERT for all new items (per-row flushes cost minutes at 10k items)
        audit.record_many(
            db,
            actor,
            "item.imported",
            [
                {"entity": "item", "entity_id": row.id, "item_id": row.id,
                 "after": {"key": row.key, "batch": batch.id, "root": str(root)}}
                for row in new_rows
            ],
        )  # fmt: skip
        batch.summary = {
            "imported": dict(report.imported),
            "unchanged": report.unchanged,
            "changed_upstream": report.changed_upstream,
            "skipped_bad_lines": [str(p) for p in report.problems],
        }
        audit.record(db, actor, "import.completed", entity="import", entity_id=batch.id, after=batch.summary)
        if assign:
            report.assignment = assign_pending(db, actor=actor)
    return report


def _float(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None
