"""Settling an item: applying verified content, and propagating Level-2 step-list changes.

Called from two places: automatic settlement when all the item's annotators agree (review.py) and an
adjudicator's resolution (adjudication.py). Every change bumps the item's version (optimistic lock)
and is written to the audit trail with the justifications that caused it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, Decision, Experiment, Item, Segment, utc_now
from expvid.platform.services import audit
from expvid.platform.services.content import Content
from expvid.platform.services.errors import Actor, Conflict
from expvid.platform.services.level2 import (
    RebuildError,
    Step,
    StepListChange,
    StepRow,
    apply_step_edit,
    rebuild_content,
    renumber_segment,
)

FINAL_STATES = ("verified", "rejected")
OPEN_STATES = ("pending", "in_review")


def require_open(item: Item, seen_version: int) -> None:
    """Refuse a decision on a closed item, or on one that changed since the reviewer opened it
    (version `seen_version`): the optimistic lock every review form is checked against."""
    if item.state not in OPEN_STATES:
        raise Conflict(f"this item is closed for review (it is {item.state})", current_version=item.version)
    if item.version != seen_version:
        raise Conflict(
            f"the item changed since you opened it (you saw version {seen_version}, it is now "
            f"version {item.version}); reload to review the current version",
            current_version=item.version,
        )


def item_content(item: Item) -> Content:
    return Content(question=item.question, options=item.options, answer=item.answer)


def segment_steps(segment: Segment) -> list[Step]:
    return [Step.from_dict(s) for s in segment.steps or []]


def bump(item: Item) -> None:
    item.version += 1
    item.updated_at = utc_now()


def set_content(db: Session, actor: Actor, item: Item, content: Content, *, action: str, reason: str) -> bool:
    """Replace the item's content; returns whether anything changed (and records it if so)."""
    before = item_content(item)
    if before == content:
        return False
    item.question, item.options, item.answer = content.question, content.options, content.answer
    bump(item)
    audit.record(
        db, actor, action, entity="item", entity_id=item.id, item_id=item.id,
        before=before.as_dict(), after=content.as_dict(), reason=reason,
    )  # fmt: skip
    return True


def finalize(db: Session, actor: Actor, item: Item, outcome: str, *, via: str, reason: str) -> None:
    """Move the item to `verified` or `rejected`; open assignments are closed."""
    before = item.state
    item.state = outcome
    item.settled_via = via
    item.settled_at = utc_now()
    bump(item)
    db.execute(
        update(Assignment)
        .where(Assignment.item_id == item.id, Assignment.completed_at.is_(None))
        .values(completed_at=utc_now())
    )
    audit.record(
        db, actor, f"item.{outcome}", entity="item", entity_id=item.id, item_id=item.id,
        before={"state": before}, after={"state": outcome, "via": via, "version": item.version}, reason=reason,
    )  # fmt: skip


def mark_conflict(
    db: Session, actor: Actor, item: Item, *, reason: str, flag: dict[str, Any] | None = None
) -> None:
    before = item.state
    item.state = "conflict"
    item.settled_via = None
    item.settled_at = None
    if flag is not None:
        item.flags = [*(item.flags or []), flag]
    bump(item)
    audit.record(
        db, actor, "item.conflict", entity="item", entity_id=item.id, item_id=item.id,
        before={"state": before}, after={"state": "conflict"}, reason=reason,
    )  # fmt: skip


def reopen_for_review(db: Session, actor: Actor, item: Item, *, reason: str) -> int:
    """Send an item back to its annotators: their decisions become stale and must be made again.

    Returns how many decisions were marked stale.
    """
    decisions = list(
        db.scalars(select(Decision).where(Decision.item_id == item.id, Decision.stale.is_(False)))
    )
    for decision in decisions:
        decision.stale = True
        audit.record(
            db, actor, "decision.stale", entity="decision", entity_id=decision.id, item_id=item.id,
            before={"verdict": decision.verdict, "version": decision.version}, reason=reason,
        )  # fmt: skip
    db.execute(update(Assignment).where(Assignment.item_id == item.id).values(completed_at=None))
    n_assigned = len(list(db.scalars(select(Assignment.id).where(Assignment.item_id == item.id))))
    before = item.state
    item.state = "in_review" if n_assigned >= item.annotators_required else "pending"
    item.settled_via = None
    item.settled_at = None
    bump(item)
    audit.record(
        db, actor, "item.reopened", entity="item", entity_id=item.id, item_id=item.id,
        before={"state": before}, after={"state": item.state}, reason=reason,
    )  # fmt: skip
    return len(decisions)


def apply_step_change(
    db: Session,
    actor: Actor,
    *,
    item: Item,
    rows: list[StepRow],
    reason: str,
    rebuild_item: bool = True,
) -> StepListChange:
    """Apply a verified Level-2 step-list edit made on `item` and rebuild every derived question.

    The settling item gets its rebuilt content (the caller then finalizes it), unless
    `rebuild_item=False`: the item is being rejected and the correction is kept for the others.
    Other Level-2 items of the same experiment are rebuilt too: verified ones stay verified (their
    step list came from a verified edit), open ones are sent back to their annotators because what
    they judged changed, and ones that cannot be rebuilt go to an adjudicator with a
    `rebuild_failed` flag.
    """
    if item.experiment_id is None or item.segment_id is None:
        raise ValueError(f"item {item.release_key} has no step list to edit")
    experiment = db.scalar(select(Experiment).where(Experiment.id == item.experiment_id).with_for_update())
    assert experiment is not None
    segments = {s.id: s for s in db.scalars(select(Segment).where(Segment.experiment_id == experiment.id))}
    segment = segments[item.segment_id]
    old_full = list(experiment.full_steps or [])
    old_steps = {sid: segment_steps(s) for sid, s in segments.items()}
    change = apply_step_edit(old_full, old_steps[segment.id], rows, window=(segment.start, segment.end))

    experiment.full_steps = change.full_steps
    experiment.steps_version += 1
    new_steps: dict[int, list[Step]] = {}
    for sid, seg in segments.items():
        new_steps[sid] = (
            change.segment_steps if sid == segment.id else renumber_segment(old_steps[sid], change)
        )
        seg.steps = [s.as_dict() for s in new_steps[sid]]
    audit.record(
        db, actor, "steps.changed", entity="experiment", entity_id=experiment.video_id, item_id=item.id,
        before={"full_steps": old_full, "segment": [s.as_dict() for s in old_steps[segment.id]]},
        after={"full_steps": change.full_steps, "segment": seg_dicts(change.segment_steps),
               "renumber": {str(k): v for k, v in change.renumber.items() if k != v}},
        reason=reason,
    )  # fmt: skip

    siblings = db.scalars(
        select(Item)
        .where(Item.experiment_id == experiment.id, Item.level == 2, Item.segment_id.is_not(None))
        .order_by(Item.id)
        .with_for_update()
    )
    for other in siblings:
        if (other.state in ("rejected", "removed") and other.id != item.id) or (
            other.id == item.id and not rebuild_item
        ):
            continue
        assert other.segment_id is not None
        try:
            rebuilt = rebuild_content(
                other.task,
                item_content(other),
                key=other.release_key,
                old_full=old_full,
                new_full=change.full_steps,
                old_segment=old_steps[other.segment_id],
                new_segment=new_steps[other.segment_id],
                renumber=change.renumber,
            )
        except RebuildError as error:
            if other.id == item.id:
                raise
            note = f"step list changed while settling {item.release_key}: {error}"
            mark_conflict(db, actor, other, reason=note, flag={"kind": "rebuild_failed", "detail": note})
            continue
        why = f"rebuilt from the step list verified on {item.release_key}: {reason}"
        changed = set_content(db, actor, other, rebuilt, action="item.rebuilt", reason=why)
        if other.id == item.id or other.state in FINAL_STATES:
            continue
        if other.state == "conflict":
            reopen_for_review(db, actor, other, reason=why)
        elif other.state in OPEN_STATES:
            # The step list the annotators judged is gone even if this question's text did not change.
            if not changed:
                bump(other)
            reopen_for_review(db, actor, other, reason=why)
    return change


def seg_dicts(steps: list[Step]) -> list[dict[str, Any]]:
    return [s.as_dict() for s in steps]
