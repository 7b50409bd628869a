"""`expvid platform export DIR --format promqa`: the verified procedural items as a ProMQA release.

    DIR/examples.json      every verified item in the release's shape and key order: the example,
                           `generation`, `adjudication`, `verification`, then the final `question`,
                           `question_approved_by`, `answers`, `answer_tags`, `answer_approved_by`
                           (and `answer_types` when the answers were labelled)
    DIR/graphs.json        the recipes of the exported items
    DIR/videos/<id>.mp4    the recordings, copied without container metadata (`clean_copy`)

`expvid eval --suite promqa --data DIR` runs it. ProMQA publishes the verification trail, so it is
in the release; who judged, how long it took and the rejected items are not, and go to the internal
folder (`DIR-INTERNAL-do-not-publish/` by default):

    campaign.jsonl          one line per procedural item, verified or not: type, template, generator,
                            state, both judgements with their review seconds, the adjudication and
                            its seconds, the final fields; reviewers as pseudonyms unless asked
    answer_types.csv        one line per final answer, for a person to label direct / suggestion /
                            intervention (Figure 4); `--answer-types FILE` reads a labelled copy
    construction_tables.{json,md}   the paper's tables about the construction (`tables.py`), from
                            the campaign and the build reports of the imported candidate folders
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.construction.recipes.promqa.review.judgements import (
    PROCEDURAL_LEVEL,
    _decisions_by_slot,
    judgement_of,
    verification_of,
)
from expvid.construction.recipes.promqa.tables import (
    construction_tables,
    read_answer_types,
    tables_markdown,
    write_answer_types_template,
)
from expvid.construction.recipes.promqa.verification import initial_adjudication, release_record, settle
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Adjudication, AuditEvent, ImportBatch, Item
from expvid.platform.services import audit
from expvid.platform.services.clean_copy import clean_copy
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.exporter import (
    ExportError,
    ExportReport,
    _check_target,
    _commit,
    _reviewer_names,
    _staging,
)
from expvid.schema.release_layout import default_internal_dir


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


def _final(
    db: Session, item: Item
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None, Adjudication | None]:
    """(verification, adjudication, final fields, the adjudication row) of a settled item."""
    verification = verification_of(db, item)
    if verification is None:
        return None, None, None, None
    call = db.scalar(
        select(Adjudication).where(Adjudication.item_id == item.id).order_by(Adjudication.id.desc()).limit(1)
    )
    if call is not None and isinstance(call.content, dict) and "adjudication" in call.content:
        adjudication = call.content["adjudication"]
    else:
        adjudication = initial_adjudication(verification, key=item.key)
    try:
        outcome = settle(adjudication)
    except ValueError:
        return verification, adjudication, None, call
    return verification, adjudication, (outcome.fields if outcome.approved else None), call


def _seconds_of_adjudication(db: Session, item: Item, call: Adjudication | None) -> float | None:
    if call is None:
        return None
    opened = db.scalar(
        select(AuditEvent.at)
        .where(AuditEvent.item_id == item.id, AuditEvent.action == "adjudication.opened")
        .order_by(AuditEvent.id)
        .limit(1)
    )
    return None if opened is None else max(0.0, (call.created_at - opened).total_seconds())


def export_procedural(
    database: Database,
    out: Path,
    *,
    internal: Path | None = None,
    with_reviewers: bool = False,
    answer_types: Path | None = None,
    actor: Actor = SYSTEM,
) -> ExportReport:
    out = out.resolve()
    _check_target(out)
    internal_dir = (internal or default_internal_dir(out)).resolve()
    if internal_dir == out or internal_dir.is_relative_to(out):
        raise ExportError(f"the internal folder {internal_dir} must lie outside the public release {out}")
    _check_target(internal_dir)
    labels = read_answer_types(answer_types) if answer_types is not None else None
    report = ExportReport(out=out, internal=internal_dir)
    staging, internal_staging = _staging(out), _staging(internal_dir)
    try:
        with database.read() as db:
            _write(db, staging, internal_staging, report, with_reviewers, labels)
        _commit(staging, out)
        _commit(internal_staging, internal_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(internal_staging, ignore_errors=True)
        if out.exists() and not internal_dir.exists():
            shutil.rmtree(out, ignore_errors=True)
        raise
    with database.write() as db:
        audit.record(
            db, actor, "export.completed", entity="export", entity_id=str(out),
            after={"items": dict(report.items), "videos": report.videos, "format": "promqa", "internal": str(internal_dir)},
        )  # fmt: skip
    return report


def _write(
    db: Session, release: Path, sidecars: Path, report: ExportReport, with_reviewers: bool,
    labels: dict[tuple[str, int], str] | None,
) -> None:  # fmt: skip
    reviewers = _reviewer_names(db, with_reviewers)
    roots = {b.id: Path(b.root) for b in db.scalars(select(ImportBatch))}
    items = list(db.scalars(select(Item).where(Item.level == PROCEDURAL_LEVEL).order_by(Item.key)))
    if not items:
        raise ExportError(
            "no procedural (ProMQA) items in this database: export the others with --format expvid"
        )
    records: list[dict[str, Any]] = []
    campaign: list[dict[str, Any]] = []
    graphs: dict[str, Any] = {}
    videos: dict[str, Path] = {}
    for item in items:
        verification, adjudication, final, call = _final(db, item)
        decisions = _decisions_by_slot(db, item)
        prov = item.provenance or {}
        record = item.record
        row = {
            "uid": item.key,
            "question_id": record.get("question_id"),
            "type": item.task,
            "is_noisy": record.get("is_noisy"),
            "template": (record.get("generation") or {}).get("template_type"),
            "generator": (record.get("generation") or {}).get("model_id"),
            "state": item.state,
            "settled_via": item.settled_via,
            "question_valid": None,
            "verification": verification,
            "adjudication": adjudication,
            "final": final,
            "annotators": [reviewers(d.user_id) for d in decisions[:2]],
            "decision_seconds": [d.seconds_spent for d in decisions[:2]],
            "adjudicator": reviewers(call.user_id) if call is not None else None,
            "adjudication_seconds": _seconds_of_adjudication(db, item, call),
            "candidates": str(roots.get(item.batch_id, "")),
        }
        if adjudication is not None:
            init = adjudication["init"]["question"]
            judged = (adjudication.get("judge") or {}).get("question")
            row["question_valid"] = init if init is not None else judged
        elif decisions:
            row["question_valid"] = (
                all(judgement_of(d).question for d in decisions[:2]) if len(decisions) > 1 else None
            )
        campaign.append(row)
        if item.state != "verified" or final is None or verification is None or adjudication is None:
            continue
        exported = release_record(record, verification, adjudication, final)
        if labels is not None:
            qid = str(row["question_id"])
            exported["answer_types"] = [labels.get((qid, i)) for i in range(len(final["answers"]))]
        records.append(exported)
        report.items[item.task] += 1
        recipe = prov.get("recipe") or {}
        graphs[str(recipe.get("activity_id"))] = {
            k: recipe[k] for k in ("name", "steps", "edges") if k in recipe
        }
        source = prov.get("source") or {}
        videos[str(record["recording_id"])] = roots[item.batch_id] / str(
            source.get("video") or item.video_path
        )
    records.sort(key=lambda r: r["question_id"])
    _write_json(release / "examples.json", records)
    _write_json(release / "graphs.json", dict(sorted(graphs.items(), key=lambda kv: (len(kv[0]), kv[0]))))
    for recording, source in sorted(videos.items()):
        copied = clean_copy(source, release / "videos", prefix=".tmp_")
        os.replace(copied, release / "videos" / f"{recording}.mp4")
        report.videos += 1
    sidecars.mkdir(parents=True, exist_ok=True)
    (sidecars / "campaign.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in campaign), encoding="utf-8"
    )
    write_answer_types_template(sidecars / "answer_types.csv", [r for r in campaign if r["final"]])
    builds = []
    for root in sorted({Path(r["candidates"]) for r in campaign if r["candidates"]}):
        path = root / "build_report.json"
        if path.is_file():
            builds.append(json.loads(path.read_text(encoding="utf-8")))
    settings = (builds[0].get("settings", {}).get("cost") if builds else None) or {}
    tables = construction_tables(
        campaign,
        builds,
        minutes_per_qa=float(settings.get("human_minutes_per_qa", 4.8)),
        hourly_rate=float(settings.get("hourly_rate", 20.0)),
        answer_types=labels,
    )
    _write_json(sidecars / "construction_tables.json", tables)
    (sidecars / "construction_tables.md").write_text(tables_markdown(tables), encoding="utf-8")
