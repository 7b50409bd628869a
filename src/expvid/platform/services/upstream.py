"""Applying a parsed candidate directory to the platform: one outcome per item (import_report.py).

Rules, in the order they are checked for an item of the directory whose identity is known:
1. it names another task or experiment than the platform's item of that identity: conflict;
2. same content hash: unchanged. Its media and provenance follow the new directory (the folder may
   have moved, clip files may have been renamed) without touching reviews; an item removed upstream
   before is restored to the state it had;
3. new content: a new upstream version. The item takes the new draft, goes back to its annotators,
   and their decisions are marked stale (kept, with the adjudication if any, in the history).
   Unless the draft is a Level-2 question and reviewers have corrected the experiment's step list on
   the platform: then the new draft was made from a list the platform no longer has, it is not
   applied (conflict) and the item is flagged `upstream_conflict`.
Items on the platform of an experiment the directory covers, with the same identity scheme, that
the directory lacks are removed upstream: flagged `removed_upstream`, withdrawn from review (state
`removed`), never deleted.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Decision, Experiment, ImportBatch, Item, Segment, User, utc_now
from expvid.platform.services import audit
from expvid.platform.services.assignment import assign_pending
from expvid.platform.services.campaign_settings import annotators_per_item, check_annotators
from expvid.platform.services.errors import Actor
from expvid.platform.services.identity import family, fingerprint
from expvid.platform.services.import_report import ImportReport, ItemOutcome
from expvid.platform.services.import_types import ParsedDirectory, ParsedItem, ParsedSegment, inside
from expvid.platform.services.settlement import OPEN_STATES, bump, item_content, reopen_for_review
from expvid.platform.services.tasks import TASKS

REMOVED_FLAG = "removed_upstream"
CONFLICT_FLAG = "upstream_conflict"
REMOVED_STATE = "removed"
#: Flags the platform itself sets; every other flag comes from the build and follows the directory.
PLATFORM_FLAGS = (REMOVED_FLAG, CONFLICT_FLAG, "rebuild_failed")
#: Provenance the platform adds to an item (a verifier's overlays): kept when the build's changes.
PLATFORM_PROVENANCE = ("overlays",)


def _upstream_provenance(provenance: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (provenance or {}).items() if k not in PLATFORM_PROVENANCE}


_CHUNK = 500


def _chunks(values: list[Any]) -> list[list[Any]]:
    return [values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK)]


def _steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"number": s["number"], "text": s["text"], "start": s.get("start"), "end": s.get("end")}
        for s in record["steps"]
    ]


def _float(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _build_flags(provenance: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in provenance.get("flags", []) or [] if isinstance(f, dict)]


def _creator(user_ids: dict[str, int], provenance: dict[str, Any]) -> tuple[str | None, int | None]:
    """Who drafted an item: an explicit `created_by` user name, else the last drafting model."""
    name = provenance.get("created_by")
    if not isinstance(name, str):
        drafts = provenance.get("drafts") or []
        models = [d.get("model") for d in drafts if isinstance(d, dict) and isinstance(d.get("model"), str)]
        name = models[-1] if models else None
    return name, (user_ids.get(name) if name else None)


@dataclass
class _SegmentState:
    row: Segment | None
    #: Why new or changed drafts of this segment cannot be applied (None: they can).
    conflict: str | None = None


class _Sync:
    def __init__(
        self, db: Session, parsed: ParsedDirectory, report: ImportReport, batch: ImportBatch, actor: Actor,
        annotators: int,
    ) -> None:  # fmt: skip
        self.db, self.parsed, self.report, self.batch, self.actor = db, parsed, report, batch, actor
        #: Judgements each new item needs (the campaign's setting, or the import's --annotators).
        self.annotators = annotators
        self.root = parsed.root
        self.now = utc_now()
        self.experiments: dict[str, Experiment] = {}
        self.segments: dict[str, _SegmentState] = {}
        self.user_ids = {name: uid for uid, name in db.execute(select(User.id, User.username))}

    # --- experiments and segments --------------------------------------------------------------------

    def _experiment(self, video_id: str, category: str | None) -> Experiment:
        if video_id in self.experiments:
            return self.experiments[video_id]
        db, info = self.db, self.parsed.experiments.get(video_id)
        experiment = db.scalar(select(Experiment).where(Experiment.video_id == video_id).with_for_update())
        full = next((list(s.record["full_step_list"]) for s in self.parsed.segments.values()
                     if s.video_id == video_id), [])  # fmt: skip
        if experiment is None:
            info = info or {}
            experiment = Experiment(
                video_id=video_id, batch_id=self.batch.id, title=info.get("title"),
                discipline=info.get("discipline") or category, duration=info.get("duration"),
                full_video=info.get("full_video") if isinstance(info.get("full_video"), str) else None,
                paper_md=self.parsed.papers.get(video_id), full_steps=full, steps_version=1,
            )  # fmt: skip
            db.add(experiment)
            db.flush()
            self.report.experiments += 1
        elif info is not None:
            self._update_experiment(experiment, info, full)
        self.experiments[video_id] = experiment
        return experiment

    def _update_experiment(self, experiment: Experiment, info: dict[str, Any], full: list[str]) -> None:
        """The directory describes this experiment again: its media and texts follow it."""
        full_video = info.get("full_video") if isinstance(info.get("full_video"), str) else None
        new = {
            "title": info.get("title"), "discipline": info.get("discipline") or experiment.discipline,
            "duration": info.get("duration"), "full_video": full_video,
            "paper_md": self.parsed.papers.get(experiment.video_id, experiment.paper_md),
        }  # fmt: skip
        if full and experiment.steps_version == 1:
            new["full_steps"] = full  # reviewers have not corrected it: the new list is the list
        before = {name: getattr(experiment, name) for name in new}
        changed = {name for name in new if before[name] != new[name]}
        for name, value in new.items():
            setattr(experiment, name, value)
        experiment.batch_id = self.batch.id
        if changed:
            self.report.experiments_updated += 1
            shown = sorted(changed - {"paper_md"}) + (["paper"] if "paper_md" in changed else [])
            audit.record(
                self.db, self.actor, "experiment.changed_upstream", entity="experiment",
                entity_id=experiment.video_id,
                before={k: before[k] for k in changed if k != "paper_md"},
                after={k: new[k] for k in changed if k != "paper_md"},
                reason=f"import {self.batch.id} ({self.root}): {', '.join(shown)} changed",
            )  # fmt: skip

    def _segment(self, key: str) -> _SegmentState:
        if key in self.segments:
            return self.segments[key]
        parsed: ParsedSegment = self.parsed.segments[key]
        db = self.db
        row = db.scalar(select(Segment).where(Segment.segment_key == key))
        steps = _steps(parsed.record)
        state = _SegmentState(row=row)
        if row is None:
            experiment = self._experiment(parsed.video_id, None)
            row = Segment(
                segment_key=key, experiment_id=experiment.id, clip=parsed.record.get("clip"),
                start=parsed.record.get("start"), end=parsed.record.get("end"), steps=steps, original_steps=steps,
            )  # fmt: skip
            db.add(row)
            db.flush()
            state.row = row
            self.report.segments += 1
        else:
            stored = db.get(Experiment, row.experiment_id)
            assert stored is not None  # foreign key
            experiment = (
                stored if stored.video_id != parsed.video_id else self._experiment(parsed.video_id, None)
            )
            if experiment.video_id != parsed.video_id:
                state.conflict = (
                    f"segment {key} belongs to experiment {experiment.video_id} on the platform, "
                    f"to {parsed.video_id} in {self.root.name}"
                )
            elif steps != row.original_steps:
                if experiment.steps_version > 1 or row.steps != row.original_steps:
                    state.conflict = (
                        f"reviewers corrected the step list of {experiment.video_id} on the platform; the "
                        f"new draft was made from another list of segment {key}, so it is not applied"
                    )
                else:
                    audit.record(
                        db, self.actor, "segment.changed_upstream", entity="segment", entity_id=key,
                        before={"steps": row.original_steps}, after={"steps": steps},
                        reason=f"import {self.batch.id} ({self.root})",
                    )  # fmt: skip
                    row.steps = row.original_steps = steps
                    self.report.segments_updated += 1
            if state.conflict is None and experiment.batch_id == self.batch.id:
                row.clip = parsed.record.get("clip")  # relative to the experiment's new directory
                row.start, row.end = parsed.record.get("start"), parsed.record.get("end")
        self.segments[key] = state
        return state

    # --- items -----------------------------------------------------------------------------------------

    def _media(self, item: ParsedItem) -> dict[str, Any]:
        """The item's media fields, relative to this directory."""
        raw = item.provenance.get("source")
        source: dict[str, Any] = raw if isinstance(raw, dict) else {}
        video = source.get("video") if isinstance(source.get("video"), str) else None
        if video is not None and (inside(self.root, video) is None or not (self.root / video).is_file()):
            self.report.warnings.append(
                f"{item.release_key}: source video {video} not found; the clip file is shown"
            )
            video = None
        return {
            "batch_id": self.batch.id,
            "video_path": item.record["video_path"],
            "source_video": video,
            "window_start": _float(source.get("start")) if video else None,
            "window_end": _float(source.get("end")) if video else None,
        }

    def _upstream_fields(
        self, item: ParsedItem, segment_id: int | None, platform: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The fields the directory decides; `platform`: the item's current provenance, whose
        platform-made parts (PLATFORM_PROVENANCE) are carried over."""
        kept = {k: v for k, v in (platform or {}).items() if k in PLATFORM_PROVENANCE}
        record = item.record
        creator, creator_id = _creator(self.user_ids, item.provenance)
        return {
            **self._media(item),
            "release_key": item.release_key,
            "discipline": str(record["category"]).strip(),
            "segment_id": segment_id,
            "asr_caption": record.get("asr_caption") or "",
            "record": record,
            "provenance": {**item.provenance, **kept},
            "creator": creator,
            "created_by_user_id": creator_id,
        }

    def _content(self, record: dict[str, Any]) -> dict[str, Any]:
        options = record.get("options")
        return {
            "question": record["question"],
            "options": {k: str(v) for k, v in options.items()} if isinstance(options, dict) else None,
            "answer": record["answer"],
        }

    def _outcome(
        self, item: ParsedItem, outcome: str, row: Item | None, reason: str = "", **extra: Any
    ) -> None:
        self.report.items.append(
            ItemOutcome(
                key=item.key, release_key=item.release_key, task=item.task, video_id=item.video_id,
                outcome=outcome, item_id=row.id if row is not None else None, reason=reason,
                upstream_version=row.upstream_version if row is not None else None, **extra,
            )
        )  # fmt: skip

    def _segment_for(self, item: ParsedItem) -> _SegmentState | None:
        return self._segment(item.segment_key) if item.segment_key is not None else None

    def add(self, item: ParsedItem) -> Item | None:
        segment = self._segment_for(item)
        if segment is not None and segment.conflict:
            self._outcome(item, "conflict", None, f"not added: {segment.conflict}")
            return None
        experiment = self._experiment(item.video_id, item.record["category"])
        if experiment.discipline is None:
            experiment.discipline = item.record["category"]
        row = Item(
            key=item.key, task=item.task, level=TASKS[item.task].level, video_id=item.video_id,
            experiment_id=experiment.id, **self._upstream_fields(item, segment.row.id if segment and segment.row else None),
            **self._content(item.record), flags=_build_flags(item.provenance), content_sha256=item.content_sha256,
            upstream_version=1, state="pending", version=1, created_at=self.now, updated_at=self.now,
            annotators_required=self.annotators,
        )  # fmt: skip
        self.db.add(row)
        return row

    def keep(self, row: Item, item: ParsedItem) -> None:
        """Same content: follow the directory (media, provenance, build flags), restore if removed."""
        segment = self._segment_for(item)
        segment_id = segment.row.id if segment and segment.row and not segment.conflict else row.segment_id
        platform = [
            f for f in row.flags or [] if f.get("kind") in PLATFORM_FLAGS and f.get("kind") != CONFLICT_FLAG
        ]
        for name, value in self._upstream_fields(item, segment_id, row.provenance).items():
            setattr(row, name, value)
        row.content_sha256 = item.content_sha256
        row.flags = [*_build_flags(item.provenance), *platform]
        if row.state == REMOVED_STATE:
            self._restore(row)
            self._outcome(item, "restored", row, "back in this directory, unchanged")
        else:
            self._outcome(item, "unchanged", row)

    def _restore(self, row: Item) -> None:
        removed = next((f for f in row.flags if f.get("kind") == REMOVED_FLAG), {})
        row.flags = [f for f in row.flags if f.get("kind") != REMOVED_FLAG]
        before = row.state
        row.state = str(removed.get("previous_state") or "pending")
        bump(row)
        audit.record(
            self.db, self.actor, "item.restored_upstream", entity="item", entity_id=row.id, item_id=row.id,
            before={"state": before}, after={"state": row.state},
            reason=f"back in import {self.batch.id} ({self.root})",
        )  # fmt: skip

    def _flag_conflict(self, row: Item, item: ParsedItem, why: str) -> None:
        """Mark the platform's item: upstream has a version that was not applied (and why)."""
        row.flags = [
            *(f for f in row.flags or [] if f.get("kind") != CONFLICT_FLAG),
            {"kind": CONFLICT_FLAG, "detail": f"import {self.batch.id}: {why}", "batch": self.batch.id,
             "content_sha256": item.content_sha256},
        ]  # fmt: skip

    def change(self, row: Item, item: ParsedItem) -> None:
        """New content upstream: a new version of the item, back to review."""
        segment = self._segment_for(item)
        if segment is not None and segment.conflict:
            self._flag_conflict(row, item, segment.conflict)
            self._outcome(item, "conflict", row, segment.conflict, state=row.state)
            return
        db = self.db
        was_removed = row.state == REMOVED_STATE
        if was_removed:
            self._restore(row)
        before = {
            **item_content(row).as_dict(), "content_sha256": row.content_sha256,
            "upstream_version": row.upstream_version, "batch": row.batch_id, "video_path": row.video_path,
        }  # fmt: skip
        segment_id = segment.row.id if segment and segment.row else None
        fields = {**self._upstream_fields(item, segment_id, row.provenance), **self._content(item.record)}
        for name, value in fields.items():
            setattr(row, name, value)
        row.content_sha256 = item.content_sha256
        row.upstream_version += 1
        row.flags = _build_flags(item.provenance)
        bump(row)
        reason = (
            f"changed upstream: import {self.batch.id} ({self.root}) brings version {row.upstream_version}"
        )
        audit.record(
            db, self.actor, "item.changed_upstream", entity="item", entity_id=row.id, item_id=row.id,
            before=before,
            after={**item_content(row).as_dict(), "content_sha256": row.content_sha256,
                   "upstream_version": row.upstream_version, "batch": self.batch.id, "video_path": row.video_path},
            reason=reason,
        )  # fmt: skip
        decided = db.scalar(
            select(Decision.id).where(Decision.item_id == row.id, Decision.stale.is_(False)).limit(1)
        )
        stale = 0
        if decided is not None or row.state not in OPEN_STATES:
            stale = reopen_for_review(db, self.actor, row, reason=reason)
        why = ("removed upstream before; back with new content; " if was_removed else "") + (
            f"new content (upstream version {row.upstream_version})"
        )
        self._outcome(item, "changed", row, why, stale_decisions=stale)

    def remove(self, row: Item, why: str) -> None:
        before = row.state
        row.flags = [*(row.flags or []),
                     {"kind": REMOVED_FLAG, "detail": f"import {self.batch.id} ({self.root}): {why}",
                      "batch": self.batch.id, "previous_state": before}]  # fmt: skip
        row.state = REMOVED_STATE
        bump(row)
        audit.record(
            self.db, self.actor, "item.removed_upstream", entity="item", entity_id=row.id, item_id=row.id,
            before={"state": before}, after={"state": REMOVED_STATE}, reason=why,
        )  # fmt: skip
        self.report.items.append(
            ItemOutcome(
                key=row.key,
                release_key=row.release_key,
                task=row.task,
                video_id=row.video_id,
                outcome="removed",
                item_id=row.id,
                reason=why,
                upstream_version=row.upstream_version,
            )
        )

    # --- the whole directory --------------------------------------------------------------------------

    def _existing(self) -> dict[str, Item]:
        db, parsed = self.db, self.parsed
        rows: dict[str, Item] = {}
        for chunk in _chunks(sorted({i.key for i in parsed.items})):
            for row in db.scalars(select(Item).where(Item.key.in_(chunk)).with_for_update()):
                rows[row.key] = row
        for chunk in _chunks(sorted(parsed.covered)):
            for row in db.scalars(select(Item).where(Item.video_id.in_(chunk)).with_for_update()):
                rows.setdefault(row.key, row)
        return rows

    def run(self) -> None:
        parsed, db = self.parsed, self.db
        existing = self._existing()
        added: list[tuple[ParsedItem, Item]] = []
        for item in parsed.items:
            row = existing.get(item.key)
            if row is None:
                new = self.add(item)
                if new is not None:
                    added.append((item, new))
                continue
            if (row.task, row.video_id) != (item.task, item.video_id):
                self._flag_conflict(row, item, "the identity names another task or experiment here")
                self._outcome(
                    item, "conflict", row,
                    f"{item.key} is a {row.task} item of experiment {row.video_id} on the platform, "
                    f"a {item.task} item of {item.video_id} here",
                    state=row.state,
                )  # fmt: skip
                continue
            stored = row.content_sha256 or fingerprint(row.record, _upstream_provenance(row.provenance))
            if stored == item.content_sha256:
                self.keep(row, item)
            else:
                self.change(row, item)
        db.flush()  # one batched INSERT for all new items
        for item, row in added:
            self._outcome(item, "added", row)
        audit.record_many(
            db, self.actor, "item.imported",
            [{"entity": "item", "entity_id": row.id, "item_id": row.id,
              "after": {"key": row.key, "release_key": row.release_key, "batch": self.batch.id,
                        "root": str(self.root), "content_sha256": row.content_sha256}}
             for _, row in added],
        )  # fmt: skip
        self._clashes([row for _, row in added])
        self._removals(existing)

    def _clashes(self, added: list[Item]) -> None:
        """Release keys a new item shares with another item: allowed (two directories without uids),
        but the export refuses two verified items with one id, so it is said now."""
        keys = sorted({row.release_key for row in added})
        owners: dict[str, list[Item]] = defaultdict(list)
        for chunk in _chunks(keys):
            for row in self.db.scalars(
                select(Item).where(Item.release_key.in_(chunk), Item.state != REMOVED_STATE)
            ):
                owners[row.release_key].append(row)
        for key, rows in sorted(owners.items()):
            if len(rows) > 1:
                self.report.warnings.append(
                    f"release id {key} is shared by {len(rows)} items ({', '.join(r.key for r in rows)}): "
                    "directories without uids number items by position; only one of them can be exported"
                )

    def _removals(self, existing: dict[str, Item]) -> None:
        parsed = self.parsed
        if not parsed.items:
            return
        schemes = {family(item.key) for item in parsed.items}
        present = {item.key for item in parsed.items}
        with_items = {item.video_id for item in parsed.items}
        others: dict[str, int] = defaultdict(int)
        for row in existing.values():
            if row.video_id in parsed.covered and family(row.key) not in (*schemes, "platform"):
                others[row.video_id] += 1
        for video_id, count in sorted(others.items()):
            self.report.warnings.append(
                f"experiment {video_id} also has {count} item(s) imported with other identities (a directory "
                "with or without uids); they are not matched with this directory's items and stay as they are"
            )
        for row in sorted(existing.values(), key=lambda r: r.id):
            if (
                row.key in present
                or row.state == REMOVED_STATE
                or row.video_id not in parsed.covered
                or family(row.key) not in schemes
            ):
                continue
            why = (
                f"experiment {row.video_id} has no items in this directory (excluded upstream)"
                if row.video_id not in with_items
                else f"no longer among the items of experiment {row.video_id} in this directory"
            )
            self.remove(row, why)


def open_import_batch(
    db: Session, report: ImportReport, *, root: str, namespace: str, actor: Actor
) -> ImportBatch:
    """The row of this import (flushed, so its id can name the batch in flags and in `report`)."""
    batch = ImportBatch(
        root=root, namespace=namespace, imported_by=actor.name, imported_at=utc_now(), summary={}
    )
    db.add(batch)
    db.flush()
    report.batch_id = batch.id
    return batch


def apply_directory(
    db: Session, parsed: ParsedDirectory, report: ImportReport, *, actor: Actor, assign: bool,
    annotators: int | None = None,
) -> None:  # fmt: skip
    """Apply `parsed` in the caller's write transaction, filling `report`. New items need
    `annotators` judgements (default: the campaign's setting, `services/campaign_settings.py`)."""
    batch = open_import_batch(db, report, root=str(parsed.root), namespace=parsed.namespace, actor=actor)
    needed = check_annotators(annotators) if annotators is not None else annotators_per_item(db)
    _Sync(db, parsed, report, batch, actor, needed).run()
    if assign:
        report.assignment = assign_pending(db, actor=actor)
    states = {}
    ids = [i.item_id for i in report.items if i.item_id is not None]
    for chunk in _chunks(ids):
        states.update(dict(db.execute(select(Item.id, Item.state).where(Item.id.in_(chunk))).all()))
    for outcome in report.items:
        if outcome.item_id is not None:
            outcome.state = states.get(outcome.item_id)
    batch.summary = report.summary()
    audit.record(
        db, actor, "import.completed", entity="import", entity_id=batch.id,
        after={"root": str(parsed.root), "counts": report.counts, "identity": report.identity},
    )  # fmt: skip
