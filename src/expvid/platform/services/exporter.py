"""`expvid platform export DIR`: the verified benchmark, in a form that cannot give answers away.

The public release (`export_public`, the default) holds only what a benchmark user needs:

    DIR/annotations/level{1,2,3}/<task>.jsonl   the release fields only (id, video_path, question,
                                                options, answer, asr_caption, video_id, category)
    DIR/videos/level_<n>/<video_id>/clip_<sha256>.mp4
    DIR/dataset.json                            counts, agreement per task, how items were settled
    DIR/release.json                            the release's number and manifest (releases.py):
                                                every item's id and content hashes, its reviewers
                                                (pseudonyms), the agreement and what it covers

`expvid eval --data DIR` reads it like the published release. Nothing in it names an original file,
a local path or the database: release clip names contain answers (`clip_1_removed_step_2.mp4`), so
videos are renamed after their own content (a name that hashes the original path could be brute-
forced from the handful of names a release uses) and copied without container metadata
(`clean_copy`: ffmpeg and editors write source names into title/comment tags). Record fields other
than the release's are left out: an import keeps unknown fields, and they could hold anything.

Everything the team needs to trace an item back goes to a separate folder, by default
`DIR-INTERNAL-do-not-publish/` beside the release (`expvid eval` never needs it): `provenance.jsonl`
(drafts, flags, source windows, original and public video paths, the verification trail),
`segments.jsonl`, `experiments.jsonl`, `papers/`, `agreement.json`, `verification.json` (sources,
database). Reviewers appear there under stable pseudonyms (`annotator-3`, in the order accounts were
created) unless `with_reviewers=True`.

`export_verified(..., public=False)` writes the older single-directory layout (release plus all
sidecars, for moving candidates between platform instances); it is never the default.

Directories are written under temporary names and renamed at the end, so a failed export never
leaves a half-written benchmark that looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
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
from expvid.platform.services.clean_copy import CleanCopyError, clean_copy
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.recipe_hooks import hooks_for_task, judged_levels
from expvid.platform.services.releases import ReleaseDraft, item_entry, record_release, write_manifests
from expvid.platform.services.reports import agreement_report, progress
from expvid.platform.services.tasks import TASKS, annotation_file
from expvid.recipes.api import ReviewHooks
from expvid.schema.release_layout import INTERNAL_SUFFIX, default_internal_dir

#: The release's record fields, in the release's order (candidates_format.md).
RELEASE_FIELDS = ("id", "video_path", "question", "options", "answer", "asr_caption", "video_id", "category")

INTERNAL_README = """This folder is the INTERNAL provenance of a verified benchmark. Do not publish it.

It names the original clip files (whose names can contain answers), local paths of the machines that
built and reviewed the benchmark, the review database, and every draft and judgement. The public
release is the sibling folder without the "{suffix}" ending; `expvid eval` needs only that one.

- provenance.jsonl   one line per exported item: build drafts and audit flags, the clip's window in its
                     source video, original_video_path -> public_video_path, the verification trail
- segments.jsonl, experiments.jsonl, papers/   the verified Level-2 step lists, experiments, papers
- agreement.json     agreement per task and per annotator pair
- verification.json  what was exported, from which candidate folders and database
Reviewers are {who}.
"""


class ExportError(RuntimeError):
    pass


@dataclass
class ExportReport:
    out: Path
    internal: Path | None = None
    items: Counter[str] = field(default_factory=Counter)
    videos: int = 0
    #: The release's number and the SHA-256 of its manifest (`services/releases.py`).
    release: int | None = None
    manifest_sha256: str | None = None

    @property
    def total(self) -> int:
        return sum(self.items.values())


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _safe_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def _check_target(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ExportError(f"{path} exists and is not empty; export into a new directory")


def _staging(path: Path) -> Path:
    staging = path.parent / f".{path.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    return staging


def _commit(staging: Path, target: Path) -> None:
    if target.exists():
        target.rmdir()
    staging.rename(target)


def export_public(
    database: Database,
    out: Path,
    *,
    internal: Path | None = None,
    with_reviewers: bool = False,
    actor: Actor = SYSTEM,
) -> ExportReport:
    """Write the public release of every verified item to `out` and the internal provenance to
    `internal` (default: `default_internal_dir(out)`); both must be new or empty directories."""
    return export_verified(
        database, out, public=True, internal=internal, with_reviewers=with_reviewers, actor=actor
    )


def export_verified(
    database: Database,
    out: Path,
    *,
    public: bool = True,
    internal: Path | None = None,
    with_reviewers: bool = False,
    actor: Actor = SYSTEM,
    kind: str = "public",
) -> ExportReport:
    """Export every verified item (see the module docstring for the two layouts) as the next
    numbered release (`services/releases.py`); `kind` names it in the manifest (public, hf)."""
    out = out.resolve()
    _check_target(out)
    internal_dir = (internal or default_internal_dir(out)).resolve() if public else None
    if internal_dir is not None:
        if internal_dir == out or internal_dir.is_relative_to(out):
            raise ExportError(f"the internal folder {internal_dir} must lie outside the public release {out}")
        _check_target(internal_dir)
    report = ExportReport(out=out, internal=internal_dir)
    staging = _staging(out)
    internal_staging = _staging(internal_dir) if internal_dir is not None else None
    try:
        with database.read() as db:
            writer = _Export(db, staging, internal_staging or staging, report, database.url, with_reviewers)
            writer.run(public=public)
        # The release is numbered and stored in the same transaction that puts its folders in place.
        with database.write() as db:
            draft = writer.draft(kind if public else "full")
            row, manifest = record_release(db, actor, draft)
            write_manifests(staging, internal_staging, manifest, row.manifest_sha256)
            report.release, report.manifest_sha256 = row.number, row.manifest_sha256
            audit.record(
                db, actor, "export.completed", entity="export", entity_id=str(out),
                after={"release": row.number, "items": dict(report.items), "videos": report.videos,
                       "public": public, "internal": str(internal_dir) if internal_dir else None,
                       "with_reviewers": with_reviewers, "manifest_sha256": row.manifest_sha256},
            )  # fmt: skip
            _commit(staging, out)
            if internal_staging is not None and internal_dir is not None:
                _commit(internal_staging, internal_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if internal_staging is not None:
            shutil.rmtree(internal_staging, ignore_errors=True)
        if report.release is not None:  # the folders were in place when the database refused
            shutil.rmtree(out, ignore_errors=True)
            if internal_dir is not None:
                shutil.rmtree(internal_dir, ignore_errors=True)
        elif out.exists() and internal_dir is not None and not internal_dir.exists():
            shutil.rmtree(out, ignore_errors=True)  # never leave a release without its provenance
        raise
    return report


class _Export:
    """One export: the release into `release`, provenance and sidecars into `sidecars`."""

    def __init__(
        self, db: Session, release: Path, sidecars: Path, report: ExportReport, database_url: str,
        with_reviewers: bool,
    ) -> None:  # fmt: skip
        self.db = db
        self.release = release
        self.sidecars = sidecars
        self.report = report
        self.database_url = database_url
        self.roots = {b.id: Path(b.root) for b in db.scalars(select(ImportBatch))}
        self.reviewer = _reviewer_names(db, with_reviewers)
        self.with_reviewers = with_reviewers
        self.placed: dict[tuple[int, str], str] = {}
        self.public = True
        #: The release manifest's items and agreement (`draft`).
        self.entries: list[dict[str, Any]] = []
        self.agreement: dict[str, Any] = {}

    def _entry(self, item: Item, public_path: str | None, decisions: dict[int, list[Decision]],
               adjudication: Adjudication | None) -> None:  # fmt: skip
        self.entries.append(
            item_entry(
                key=item.key, record=_release_record(item, public_path), task=item.task,
                annotators=[self.reviewer(d.user_id) for d in decisions.get(item.id, [])],
                adjudicator=self.reviewer(adjudication.user_id) if adjudication else None,
                settled_via=item.settled_via, edited=_edited(item), upstream_version=item.upstream_version,
            )
        )  # fmt: skip

    def draft(self, kind: str) -> ReleaseDraft:
        return ReleaseDraft(kind=kind, entries=self.entries, agreement=self.agreement,
                            reviewers="user names" if self.with_reviewers else "pseudonyms")  # fmt: skip

    def place(
        self, batch_id: int, relative: str | None, level: int, video_id: str, *, copy: bool = True
    ) -> str | None:
        """The public path of a video (copied without metadata under a content name), once per file.

        With `copy=False` only a video an item already placed is named: the public release holds
        the videos its records use and nothing only the internal sidecars refer to.
        """
        if not relative:
            return None
        key = (batch_id, relative)
        if key not in self.placed and not copy:
            return None
        if key not in self.placed:
            source = self.roots[batch_id] / relative
            if not source.is_file():
                raise ExportError(f"video {source} is missing; cannot export")
            folder = self.release / "videos" / f"level_{level}" / _safe_component(video_id)
            try:
                copied = clean_copy(source, folder)
            except CleanCopyError as error:
                raise ExportError(str(error)) from None
            self.placed[key] = copied.relative_to(self.release).as_posix()
        return self.placed[key]

    def run(self, *, public: bool) -> None:
        self.public = public
        db = self.db
        # Judged items (a recipe's page kind `procedural`) have their recipe's own export format.
        items = list(
            db.scalars(
                select(Item)
                .where(Item.state == "verified", Item.level.not_in(judged_levels()))
                .order_by(Item.task, Item.id)
            )
        )
        _refuse_clashes(items)
        present_tasks = {task for (task,) in db.execute(select(Item.task).distinct())}
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
        settled_via: Counter[str] = Counter()
        edited = 0
        # A recipe's own tasks with a release writer of their own (`ReviewHooks.write_release`).
        own_layout: dict[int, tuple[Any, list[Item]]] = {}
        for item in items:
            hooks = hooks_for_task(item.task)
            if hooks is not None and type(hooks).write_release is not ReviewHooks.write_release:
                own_layout.setdefault(id(hooks), (hooks, []))[1].append(item)
        apart = {item.id for _, group in own_layout.values() for item in group}
        in_release = list(items)
        items = [item for item in items if item.id not in apart]
        for item in items:
            public_path = self.place(item.batch_id, item.video_path, item.level, item.video_id)
            record = _release_record(item, public_path) if public else _full_record(item, public_path)
            records[item.task].append(record)
            self.report.items[item.task] += 1
            video_ids.add(item.video_id)
            settled_via[item.settled_via or "unknown"] += 1
            edited += _edited(item)
            if item.segment_id is not None:
                exported_by_segment[item.segment_id].append(item.release_key)
            provenance.append(self._provenance(item, public_path, decisions, adjudications.get(item.id)))
            self._entry(item, public_path, decisions, adjudications.get(item.id))
        for task in TASKS:
            if task in present_tasks and hooks_for_task(task) is None:
                _write_jsonl(annotation_file(self.release, task), records.get(task, []))
        notes: list[dict[str, Any]] = []
        for hooks, group in own_layout.values():
            written = hooks.write_release(self.release, group, self.roots)
            counts, overlays = written if written is not None else ({}, [])
            self.report.items.update(counts)
            notes += overlays
            for item in group:
                video_ids.add(item.video_id)
                settled_via[item.settled_via or "unknown"] += 1
                edited += _edited(item)
                path = hooks.release_path(item)
                provenance.append(self._provenance(item, path, decisions, adjudications.get(item.id)))
                self._entry(item, path, decisions, adjudications.get(item.id))
        if own_layout:
            _write_json(self.sidecars / "overlays.json", notes)

        _write_jsonl(self.sidecars / "provenance.jsonl", provenance)
        self._segments(exported_by_segment)
        self._experiments(video_ids)
        agreement = agreement_report(db, scope="items under review")
        released = agreement_report(db, item_ids={i.id for i in in_release}, scope="items of this release")
        self.agreement = {
            "released_items": _pseudonymised_agreement(released.as_dict(), self.reviewer),
            "campaign": _pseudonymised_agreement(agreement.as_dict(), self.reviewer),
        }
        _write_json(
            self.sidecars / "agreement.json", _pseudonymised_agreement(agreement.as_dict(), self.reviewer)
        )
        state = progress(db)
        self.report.videos = len(set(self.placed.values()))
        # What both the internal verification record and the public dataset card open with.
        header = {
            "format": "expvid-release",
            "exported_at": utc_now().isoformat(),
            "items": dict(sorted(self.report.items.items())),
            "total_items": self.report.total,
        }
        _write_json(
            self.sidecars / "verification.json",
            {
                **header,
                "platform_states": state.totals,
                "sources": [str(root) for root in self.roots.values()],
                "database": _safe_url(self.database_url),
                "reviewers": "user names" if self.with_reviewers else "pseudonyms",
            },
        )
        if public:
            _write_json(
                self.release / "dataset.json",
                {
                    **header,
                    "videos": self.report.videos,
                    "verification": {
                        "protocol": _protocol(db, in_release),
                        "settled_via": dict(sorted(settled_via.items())),
                        "edited_by_experts": edited,
                        "agreement": {
                            "categories": ["approve", "edit", "reject"],
                            "covers": agreement.covers(),
                            "overall": agreement.overall.as_dict(),
                            "by_task": {t: a.as_dict() for t, a in agreement.by_task.items()},
                        },
                    },
                },
            )
            who = (
                "named by their user names"
                if self.with_reviewers
                else "pseudonymised (annotator-N, adjudicator-N)"
            )
            (self.sidecars / "README.txt").write_text(
                INTERNAL_README.format(suffix=INTERNAL_SUFFIX, who=who), encoding="utf-8"
            )

    def _provenance(
        self,
        item: Item,
        public_path: str | None,
        decisions: dict[int, list[Decision]],
        adjudication: Adjudication | None,
    ) -> dict[str, Any]:
        extra = {k: v for k, v in item.record.items() if k not in RELEASE_FIELDS}
        return {
            **item.provenance,
            "item": item.release_key,
            "platform_key": item.key,
            "upstream_version": item.upstream_version,
            "task": item.task,
            "video_id": item.video_id,
            "imported_from": str(self.roots[item.batch_id]),
            "original_video_path": item.video_path,
            "public_video_path": public_path,
            **({"extra_record_fields": extra} if extra else {}),
            "verification": {
                "state": item.state,
                "settled_via": item.settled_via,
                "settled_at": item.settled_at.isoformat() if item.settled_at else None,
                "version": item.version,
                "edited": _edited(item),
                "judgements": [
                    {
                        "annotator": self.reviewer(d.user_id),
                        "verdict": d.verdict,
                        "justification": d.justification,
                        "minutes": None if d.seconds_spent is None else round(d.seconds_spent / 60, 2),
                    }
                    for d in decisions.get(item.id, [])
                ],
                "adjudication": None
                if adjudication is None
                else {
                    "adjudicator": self.reviewer(adjudication.user_id),
                    "outcome": adjudication.outcome,
                    "justification": adjudication.justification,
                    "matched_judgements": len(adjudication.matched_decisions or []),
                    "own_edit": adjudication.own_edit,
                },
            },
        }

    def _sidecar_video(self, experiment: Experiment, relative: str | None, level: int) -> str | None:
        """A segment's clip or an experiment's full video, placed as `place` does; unlike an item's
        video it is optional, so a file the import lacks is left out rather than failing the export."""
        if not relative or not (self.roots[experiment.batch_id] / relative).is_file():
            return None
        return self.place(experiment.batch_id, relative, level, experiment.video_id, copy=not self.public)

    def _segments(self, exported_by_segment: dict[int, list[str]]) -> None:
        rows = []
        for segment in self.db.scalars(
            select(Segment).where(Segment.id.in_(list(exported_by_segment))).order_by(Segment.id)
        ):
            experiment = self.db.get(Experiment, segment.experiment_id)
            assert experiment is not None  # foreign key
            clip = self._sidecar_video(experiment, segment.clip, 2)
            rows.append(
                {
                    "segment_id": segment.segment_key,
                    "video_id": experiment.video_id,
                    "clip": clip,
                    "original_clip": segment.clip,
                    "start": segment.start,
                    "end": segment.end,
                    "steps": segment.steps,
                    "full_step_list": experiment.full_steps,
                    "items": exported_by_segment[segment.id],
                    "original_steps": segment.original_steps,
                }
            )
        if rows:
            _write_jsonl(self.sidecars / "segments.jsonl", rows)

    def _experiments(self, video_ids: set[str]) -> None:
        rows = []
        for experiment in self.db.scalars(
            select(Experiment).where(Experiment.video_id.in_(sorted(video_ids))).order_by(Experiment.video_id)
        ):
            full_video = self._sidecar_video(experiment, experiment.full_video, 3)
            rows.append(
                {
                    "video_id": experiment.video_id,
                    "title": experiment.title,
                    "discipline": experiment.discipline,
                    "duration": experiment.duration,
                    "full_video": full_video,
                    "original_full_video": experiment.full_video,
                }
            )
            if experiment.paper_md:
                paper = self.sidecars / "papers" / f"{_safe_component(experiment.video_id)}.md"
                paper.parent.mkdir(parents=True, exist_ok=True)
                paper.write_text(experiment.paper_md, encoding="utf-8")
        if rows:
            _write_jsonl(self.sidecars / "experiments.jsonl", rows)


def _protocol(db: Session, items: list[Item]) -> str:
    """How the released items were verified, in the words a dataset card needs."""
    counts = Counter(item.annotators_required for item in items)
    if not counts:
        return "no item released"
    parts = [f"{n} item(s) by {k} independent expert annotator(s)" for k, n in sorted(counts.items())]
    if set(counts) == {2}:
        return "two independent expert annotators per item; disagreements adjudicated"
    return "; ".join(parts) + "; disagreements adjudicated"


def _refuse_clashes(items: list[Item]) -> None:
    """Two verified items with one release id (two candidate directories without uids number their
    items by position) would be one id twice in a task file: say which, export nothing."""
    owners: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        owners[item.release_key].append(item)
    clashes = {key: rows for key, rows in owners.items() if len(rows) > 1}
    if clashes:
        listed = "; ".join(
            f"{key}: {', '.join(r.key for r in rows)}" for key, rows in sorted(clashes.items())[:10]
        )
        raise ExportError(
            f"{len(clashes)} release id(s) belong to more than one verified item ({listed}). They come from "
            "candidate directories without stable ids (no `uid` in provenance.jsonl): reject the duplicates, "
            "or rebuild with a current `expvid build` and import again"
        )


def _safe_component(name: str) -> str:
    """A video id as one path component (ids come from candidate files)."""
    cleaned = name.replace(os.sep, "_").replace("/", "_").replace("\\", "_")
    return cleaned if cleaned not in ("", ".", "..") else "_"


def _release_record(item: Item, video_path: str | None) -> dict[str, Any]:
    """The verified item with the release's fields only."""
    record: dict[str, Any] = {
        "id": item.record.get("id"),
        "video_path": video_path,
        "question": item.question,
    }
    if item.options is not None or "options" in item.record:
        record["options"] = item.options
    record["answer"] = item.answer
    record["asr_caption"] = item.asr_caption
    record["video_id"] = item.record.get("video_id", item.video_id)
    record["category"] = item.record.get("category", item.discipline)
    return record


def _full_record(item: Item, video_path: str | None) -> dict[str, Any]:
    """The imported record with the verified content (unknown fields kept: the internal layout)."""
    record = dict(item.record)
    record["question"] = item.question
    record["answer"] = item.answer
    if item.options is not None or "options" in record:
        record["options"] = item.options
    record["video_path"] = video_path
    return record


@dataclass(frozen=True)
class _Reviewers:
    """User id (or user name) -> the name the export shows: the user name, or a pseudonym stable for
    the database (role and creation order, e.g. `annotator-3`)."""

    by_id: dict[int, str]
    by_name: dict[str, str]

    def __call__(self, user_id: int | None) -> str | None:
        return None if user_id is None else self.by_id.get(user_id)


def _reviewer_names(db: Session, real: bool) -> _Reviewers:
    by_id: dict[int, str] = {}
    by_name: dict[str, str] = {}
    counters: Counter[str] = Counter()
    for user in db.scalars(select(User).order_by(User.id)):
        counters[user.role] += 1
        shown = user.username if real else f"{user.role}-{counters[user.role]}"
        by_id[user.id] = by_name[user.username] = shown
    return _Reviewers(by_id, by_name)


def _pseudonymised_agreement(report: dict[str, Any], reviewers: _Reviewers) -> dict[str, Any]:
    """The agreement report with annotator names shown as everywhere else in the export."""
    renamed = dict(report)
    for key in ("by_pair", "by_task_and_pair"):
        renamed[key] = [
            {**row, "annotators": [reviewers.by_name.get(name, "unknown") for name in row["annotators"]]}
            for row in report.get(key, [])
        ]
    return renamed


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


__all__ = ["ExportError", "ExportReport", "export_public", "export_verified"]
