"""Importing a ProMQA candidate directory (`expvid build --recipe promqa`) as procedural items.

The directory is ProMQA's release layout plus expvid's sidecars (`candidates.py` of the recipe):
`examples.json` (one generated question with its machine answers per record), `graphs.json`,
`videos/<recording>.mp4`, `clips/<hash>.mp4` (the prefix clips) and `provenance.jsonl`. Each
record becomes an item keyed by its `uid` (`<type>/<question_id>`): the reviewer's player seeks in
the recording and stays inside the prefix window [0, end of the prefix), the prefix clip being the
fallback. The recipe graph travels with the item (`provenance["recipe"]`) for the review page.
As for ExpVid candidates: everything is checked before anything is written (file:line problems),
and every item gets an outcome in the report: added, unchanged, or conflict when its content changed
upstream (a procedural item is not replaced by a re-import: the reviewed version stays, flagged).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sqlalchemy import select

from expvid.construction.recipes.promqa import candidates as files
from expvid.construction.recipes.promqa.examples import QUESTION_TYPES
from expvid.construction.recipes.promqa.review.judgements import PROCEDURAL_LEVEL, generated_pair
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Item, utc_now
from expvid.platform.services import audit
from expvid.platform.services.assignment import assign_pending
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.identity import directory_namespace
from expvid.platform.services.import_report import ImportReport, ItemOutcome
from expvid.platform.services.import_types import ImportRefused, ParsedItem
from expvid.platform.services.text_checks import NUL_REASON, nul_fields
from expvid.platform.services.upstream import open_import_batch
from expvid.schema import RecordProblem
from expvid.suites.release_io import json_records, read_release_bytes


def is_procedural_dir(root: Path) -> bool:
    """A ProMQA candidate or release directory (examples.json + graphs.json, no ExpVid annotations)."""
    return (
        (root / files.EXAMPLES_FILE).is_file()
        and (root / files.GRAPHS_FILE).is_file()
        and not (root / "annotations").is_dir()
    )


def _inside(root: Path, relative: Any) -> Path | None:
    if not isinstance(relative, str) or not relative or Path(relative).is_absolute():
        return None
    path = (root / relative).resolve()
    return path if path.is_relative_to(root) else None


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def parse_procedural(root: Path) -> tuple[list[ParsedItem], dict[str, Any], ImportReport]:
    root = root.resolve()
    report = ImportReport(root=root, namespace=directory_namespace(root))
    graphs_path = root / files.GRAPHS_FILE
    try:
        graphs = json.loads(graphs_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        report.problems.append(RecordProblem(graphs_path, 1, f"cannot read the recipe graphs ({error})"))
        raise ImportRefused(report) from None
    if nul_fields(graphs):
        report.problems.append(RecordProblem(graphs_path, 1, f"{nul_fields(graphs)[0]} {NUL_REASON}"))
        raise ImportRefused(report)
    by_name = {g.get("name"): (activity, g) for activity, g in graphs.items() if isinstance(g, dict)}
    provenance = files.read_provenance(root)
    path = root / files.EXAMPLES_FILE
    data = read_release_bytes(path)
    if isinstance(data, RecordProblem):
        report.problems.append(data)
        raise ImportRefused(report)
    items: list[ParsedItem] = []
    seen: set[str] = set()
    for line, record in json_records(path, data):
        if isinstance(record, RecordProblem):
            report.problems.append(record)
            continue
        bad: list[str] = [f"{field} {NUL_REASON}" for field in nul_fields(record)]
        qid, kind = record.get("question_id"), record.get("type")
        question, answers = record.get("question"), record.get("answers")
        if not isinstance(qid, str) or not qid:
            bad.append("missing 'question_id'")
        if kind not in QUESTION_TYPES:
            bad.append(f"'type' must be one of {', '.join(QUESTION_TYPES)}")
        if not isinstance(question, str) or not question.strip():
            bad.append("missing 'question'")
        if (
            not isinstance(answers, list)
            or not answers
            or not all(isinstance(a, str) and a.strip() for a in answers)
        ):
            bad.append("'answers' must be a non-empty list of texts")
        if record.get("activity_name") not in by_name:
            bad.append(f"activity {record.get('activity_name')!r} has no graph in {files.GRAPHS_FILE}")
        prov = provenance.get(str(qid), {})
        raw_source = prov.get("source")
        source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
        recording = f"{files.VIDEO_DIR}/{record.get('recording_id')}.mp4"
        video = source.get("video", recording)
        if _inside(root, video) is None or not (root / video).is_file():
            bad.append(f"recording not found: {video}")
        clip = prov.get("clip")
        if clip is not None and (_inside(root, clip) is None or not (root / clip).is_file()):
            bad.append(f"prefix clip not found: {clip}")
        key = f"{kind}/{qid}"
        if key in seen:
            bad.append(f"question_id {qid} appears twice")
        if bad:
            report.problems.extend(RecordProblem(path, line, message) for message in bad)
            continue
        seen.add(key)
        activity, graph = by_name[record["activity_name"]]
        prov = {**prov, "recipe": {"activity_id": activity, **graph}}
        prov.setdefault("source", {"video": video, "start": 0.0, "end": None})
        digest = _fingerprint(record, prov)
        items.append(ParsedItem(key=key, release_key=key, task=str(kind), record=record, provenance=prov,
                                segment_key=None, content_sha256=digest, fingerprint=digest))  # fmt: skip
    return items, graphs, report


def _outcome(parsed: ParsedItem, outcome: str, row: Item | None, reason: str = "") -> ItemOutcome:
    return ItemOutcome(
        key=parsed.key, release_key=parsed.release_key, task=parsed.task,
        video_id=str(parsed.record.get("recording_id")), outcome=outcome,
        item_id=row.id if row is not None else None, reason=reason,
        upstream_version=row.upstream_version if row is not None else None,
    )  # fmt: skip


def import_procedural(
    database: Database, root: Path, *, actor: Actor = SYSTEM, skip_bad: bool = False, assign: bool = True
) -> ImportReport:
    items, _graphs, report = parse_procedural(root)
    root = report.root
    if report.problems and not skip_bad:
        raise ImportRefused(report)
    with database.write() as db:
        batch = open_import_batch(db, report, root=str(root), namespace=report.namespace, actor=actor)
        existing = {row.key: row for row in db.scalars(select(Item).where(Item.level == PROCEDURAL_LEVEL))}
        added: list[tuple[ParsedItem, Item]] = []
        for parsed in items:
            known = existing.get(parsed.key)
            if known is not None:
                stored = known.content_sha256 or _fingerprint(known.record, known.provenance)
                if stored == parsed.content_sha256:
                    report.items.append(_outcome(parsed, "unchanged", known))
                else:
                    known.flags = [*(f for f in known.flags or [] if f.get("kind") != "upstream_conflict"),
                                   {"kind": "upstream_conflict", "batch": batch.id,
                                    "detail": f"import {batch.id}: changed upstream; a procedural item keeps its reviewed version"}]  # fmt: skip
                    report.items.append(
                        _outcome(
                            parsed, "conflict", known, "changed upstream; procedural items are not replaced"
                        )
                    )
                continue
            record, prov = parsed.record, parsed.provenance
            question, answers = generated_pair(record)
            source = prov["source"]
            end = source.get("end")
            creator = prov.get("generator") or (record.get("generation") or {}).get("model_id")
            row = Item(
                key=parsed.key,
                release_key=parsed.release_key,
                content_sha256=parsed.content_sha256,
                upstream_version=1,
                task=parsed.task,
                level=PROCEDURAL_LEVEL,
                discipline=str(record["activity_name"]),
                video_id=str(record["recording_id"]),
                batch_id=batch.id,
                experiment_id=None,
                segment_id=None,
                video_path=prov.get("clip") or source["video"],
                source_video=source["video"],
                window_start=0.0 if isinstance(end, int | float) else None,
                window_end=float(end) if isinstance(end, int | float) else None,
                question=question,
                options=None,
                answer=answers,
                asr_caption="",
                record=record,
                provenance=prov,
                flags=[],
                created_by_user_id=None,
                creator=creator if isinstance(creator, str) else None,
                state="pending",
                version=1,
                created_at=utc_now(),
                updated_at=utc_now(),
            )
            db.add(row)
            added.append((parsed, row))
        db.flush()
        report.items.extend(_outcome(parsed, "added", row) for parsed, row in added)
        audit.record_many(
            db, actor, "item.imported",
            [{"entity": "item", "entity_id": r.id, "item_id": r.id,
              "after": {"key": r.key, "batch": batch.id, "root": str(root)}} for _, r in added],
        )  # fmt: skip
        if assign:
            report.assignment = assign_pending(db, actor=actor)
        batch.summary = {**report.summary(), "kind": "procedural"}
        audit.record(
            db, actor, "import.completed", entity="import", entity_id=batch.id,
            after={"root": str(root), "counts": report.counts, "kind": "procedural"},
        )  # fmt: skip
    return report
