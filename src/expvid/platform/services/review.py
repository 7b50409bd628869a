"""Annotator decisions: approve, edit or reject an item, always with a justification.

ExpVid appendix E: "Each annotation requires a brief justification, even for approvals". As in the
double-annotation protocols of the build recipes' papers, two annotators judge each item
independently; agreement settles it, a conflict goes to an adjudicator. A decision is saved against the item version the annotator saw (optimistic
locking): if the item changed since, or the same annotator saved from another tab, the save is
refused with `Conflict` instead of silently overwriting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from expvid.platform.config import InputLimits
from expvid.platform.db.models import Assignment, Decision, Experiment, Item, Segment, utc_now
from expvid.platform.services import audit, limits
from expvid.platform.services.access import assignment_for
from expvid.platform.services.content import Content, ContentError, same_content, validate_content
from expvid.platform.services.errors import SYSTEM, Actor, Conflict, Forbidden, InvalidInput, NotFound
from expvid.platform.services.level2 import (
    RebuildError,
    StepEditError,
    StepListChange,
    StepRow,
    apply_step_edit,
    normalized_rows,
    rebuild_content,
    rows_change_anything,
)
from expvid.platform.services.recipe_hooks import judged_levels
from expvid.platform.services.settlement import (
    apply_step_change,
    finalize,
    item_content,
    mark_conflict,
    require_open,
    segment_steps,
    set_content,
)

VERDICTS = ("approve", "edit", "reject")


@dataclass(frozen=True)
class DecisionInput:
    verdict: str
    justification: str
    #: The item version shown to the annotator.
    item_version: int
    #: The version of this annotator's own decision shown (0 when there was none).
    decision_version: int = 0
    #: Edited question / options / answer (verdict "edit", items without a step list).
    content: Content | None = None
    #: Edited step list (Level-2 items with a segment): with "edit", the proposed list this question
    #: is rebuilt from; with "reject", a correction of the segment's steps kept for its other
    #: questions (when the corrected list leaves this question impossible).
    rows: list[StepRow] | None = None


@dataclass(frozen=True)
class DecisionResult:
    decision_id: int
    decision_version: int
    item_state: str
    item_version: int


def uses_step_editor(item: Item) -> bool:
    return item.level == 2 and item.segment_id is not None


def lock_item(db: Session, item_id: int) -> Item:
    """Lock an item for a write; Level-2 items lock their experiment first (one lock order, no deadlock)."""
    experiment_id = db.scalar(select(Item.experiment_id).where(Item.id == item_id, Item.level == 2))
    if experiment_id is not None:
        db.execute(select(Experiment.id).where(Experiment.id == experiment_id).with_for_update())
    item = db.scalar(select(Item).where(Item.id == item_id).with_for_update())
    if item is None:
        raise NotFound(f"item {item_id} not found")
    return item


CANNOT_REBUILD = "cannot_rebuild"


def segment_window(segment: Segment) -> tuple[float | None, float | None]:
    return (segment.start, segment.end)


def check_step_edit(db: Session, item: Item, rows: list[StepRow]) -> StepListChange:
    """The step-list change `rows` would make, or InvalidInput naming every bad row."""
    assert item.segment_id is not None and item.experiment_id is not None
    experiment = db.get(Experiment, item.experiment_id)
    segment = db.get(Segment, item.segment_id)
    assert experiment is not None and segment is not None
    try:
        return apply_step_edit(
            experiment.full_steps, segment_steps(segment), rows, window=segment_window(segment)
        )
    except StepEditError as error:
        raise InvalidInput(error.problems) from None


def preview_step_edit(db: Session, item: Item, rows: list[StepRow]) -> Content:
    """The item's question rebuilt from an edited step list (what the annotator proposes).

    A list that is fine in itself but leaves this question impossible (too few steps for four
    distinct orderings, the missing or predicted step removed...) raises InvalidInput with code
    `cannot_rebuild`: the right outcome is then to reject the question and keep the correction.
    """
    change = check_step_edit(db, item, rows)
    experiment = db.get(Experiment, item.experiment_id)
    segment = db.get(Segment, item.segment_id)
    assert experiment is not None and segment is not None
    try:
        return rebuild_content(
            item.task,
            item_content(item),
            key=item.release_key,
            old_full=experiment.full_steps,
            new_full=change.full_steps,
            old_segment=segment_steps(segment),
            new_segment=change.segment_steps,
            renumber=change.renumber,
        )
    except RebuildError as error:
        raise InvalidInput(
            [
                f"this question cannot be rebuilt from the corrected step list: {error}. If the "
                "correction is right, the question cannot stay as it is: choose \u201cReject\u201d; your "
                "step corrections are kept with the rejection and, once settled, apply to the "
                "segment's other questions."
            ],
            code=CANNOT_REBUILD,
        ) from None


def _proposal(db: Session, item: Item, data: DecisionInput) -> dict[str, Any] | None:
    if data.verdict == "reject" and data.rows is not None and uses_step_editor(item):
        segment = db.get(Segment, item.segment_id)
        assert segment is not None
        if not rows_change_anything(segment_steps(segment), data.rows):
            return None
        check_step_edit(db, item, data.rows)
        return {"steps": [r.as_dict() for r in data.rows]}
    if data.verdict != "edit":
        return None
    if uses_step_editor(item):
        if data.rows is None:
            raise InvalidInput(["an edit of a Level-2 item is an edited step list"])
        segment = db.get(Segment, item.segment_id)
        assert segment is not None
        if not rows_change_anything(segment_steps(segment), data.rows):
            raise InvalidInput(["the step list is unchanged: choose approve, or change the steps"])
        derived = preview_step_edit(db, item, data.rows)
        return {"steps": [r.as_dict() for r in data.rows], **derived.as_dict()}
    if data.content is None:
        raise InvalidInput(["an edit needs the edited question, options and answer"])
    try:
        validate_content(item.task, data.content)
    except ContentError as error:
        raise InvalidInput(error.problems) from None
    if same_content(data.content, item_content(item)):
        raise InvalidInput(["nothing was changed: choose approve, or edit the question, options or answer"])
    return data.content.as_dict()


def submit_decision(
    db: Session,
    actor: Actor,
    item_id: int,
    data: DecisionInput,
    *,
    min_justification: int = 5,
    bounds: InputLimits = limits.DEFAULT_LIMITS,
) -> DecisionResult:
    """Save (or revise) an annotator's decision; settles the item when all its decisions agree."""
    if actor.role != "annotator":
        raise Forbidden("only annotators record review decisions")
    too_long = limits.submission_problems(data.justification, data.content, data.rows, bounds)
    if too_long:
        raise InvalidInput(too_long)
    item = lock_item(db, item_id)
    assignment = assignment_for(db, actor, item.id)
    if assignment is None:
        raise NotFound(f"item {item_id} not found")
    if item.level in judged_levels():  # a recipe's judged items are judged, not approved or edited
        raise InvalidInput(
            ["this is a procedural QA item: judge it on its review page (its recipe's judgement form)"]
        )
    problems = []
    if data.verdict not in VERDICTS:
        problems.append(f"the decision must be one of {', '.join(VERDICTS)}")
    if len(data.justification.strip()) < min_justification:
        problems.append(
            f"a justification of at least {min_justification} characters is required for every decision"
        )
    if problems:
        raise InvalidInput(problems)
    require_open(item, data.item_version)
    decision = db.scalar(select(Decision).where(Decision.item_id == item.id, Decision.user_id == actor.id))
    current_decision_version = decision.version if decision else 0
    if current_decision_version != data.decision_version:
        raise Conflict(
            "you saved a decision on this item from another page in the meantime "
            f"(decision version {current_decision_version}); reload before saving again",
            current_version=item.version,
        )
    proposal = _proposal(db, item, data)
    now = utc_now()
    after = {"verdict": data.verdict, "proposal": proposal, "item_version": item.version}
    if decision is None:
        opened = assignment.opened_at
        decision = Decision(
            item_id=item.id,
            user_id=actor.id,
            verdict=data.verdict,
            proposal=proposal,
            justification=data.justification.strip(),
            item_version=item.version,
            version=1,
            stale=False,
            seconds_spent=(now - opened).total_seconds() if opened else None,
            created_at=now,
            updated_at=now,
        )
        db.add(decision)
        db.flush()
        action, before = "decision.created", None
    else:
        before = {
            "verdict": decision.verdict,
            "proposal": decision.proposal,
            "item_version": decision.item_version,
        }
        action = "decision.updated"
        decision.verdict = data.verdict
        decision.proposal = proposal
        decision.justification = data.justification.strip()
        decision.item_version = item.version
        decision.version += 1
        decision.stale = False
        decision.updated_at = now
    db.execute(update(Assignment).where(Assignment.id == assignment.id).values(completed_at=now))
    audit.record(
        db, actor, action, entity="decision", entity_id=decision.id, item_id=item.id,
        before=before, after={**after, "version": decision.version}, reason=decision.justification,
    )  # fmt: skip
    settle_if_ready(db, item)
    return DecisionResult(decision.id, decision.version, item.state, item.version)


def _same_proposal(item: Item, a: Decision, b: Decision) -> bool:
    if a.proposal is None or b.proposal is None:
        return False
    if uses_step_editor(item):
        return _steps_of(a) == _steps_of(b)
    return same_content(a.proposal, b.proposal)


def _steps_of(decision: Decision) -> list[tuple[int | None, str, float | None, float | None]] | None:
    """The step list a decision proposes (normalised for comparison), or None."""
    steps = (decision.proposal or {}).get("steps")
    if steps is None:
        return None
    return normalized_rows([StepRow.from_dict(r) for r in steps])


def settle_if_ready(db: Session, item: Item) -> None:
    """Settle by agreement once all the item's current decisions are in (its `annotators_required`:
    two by default, one to five by campaign setting); any disagreement goes to adjudication.

    Agreement means every judgement is the same: all approve; all reject with the same step-list
    corrections (or none); all make the same edit. With one annotator, their judgement settles.
    """
    decisions = list(
        db.scalars(
            select(Decision)
            .where(Decision.item_id == item.id, Decision.stale.is_(False))
            .order_by(Decision.id)
        )
    )
    needed = max(1, item.annotators_required)
    if len(decisions) < needed:
        return
    verdicts = [d.verdict for d in decisions]
    who = "one annotator" if len(decisions) == 1 else f"{len(decisions)} annotators"
    reason = f"{who}: {' / '.join(verdicts)}"
    first = decisions[0]
    if all(v == "approve" for v in verdicts):
        finalize(db, SYSTEM, item, "verified", via="agreement", reason=f"{reason} (auto-settled)")
    elif all(v == "reject" for v in verdicts):
        steps = _steps_of(first)
        if any(_steps_of(d) != steps for d in decisions[1:]):
            # All drop the question, but they correct the segment's steps differently (or only some
            # do): an adjudicator decides which correction the segment's other questions get.
            mark_conflict(
                db, SYSTEM, item, reason=f"{reason}: all reject, but their step-list corrections differ"
            )
            return
        if steps is not None:
            assert first.proposal is not None
            rows = [StepRow.from_dict(r) for r in first.proposal["steps"]]
            apply_step_change(
                db, SYSTEM, item=item, rows=rows, reason=f"{reason}, identical step corrections",
                rebuild_item=False,
            )  # fmt: skip
        finalize(db, SYSTEM, item, "rejected", via="agreement", reason=reason)
    elif all(v == "edit" for v in verdicts) and all(_same_proposal(item, first, d) for d in decisions[1:]):
        assert first.proposal is not None
        why = f"{reason}, identical edits" if len(decisions) > 1 else f"{reason} (the only judgement)"
        if uses_step_editor(item):
            rows = [StepRow.from_dict(r) for r in first.proposal["steps"]]
            apply_step_change(db, SYSTEM, item=item, rows=rows, reason=why)
        else:
            set_content(db, SYSTEM, item, Content.from_dict(first.proposal), action="item.edited", reason=why)
        finalize(db, SYSTEM, item, "verified", via="agreement", reason=why)
    else:
        mark_conflict(db, SYSTEM, item, reason=f"{reason}: the judgements differ")


def mark_opened(db: Session, actor: Actor, item_id: int) -> None:
    """Record when an annotator first opened an item (the start of its time per item)."""
    if actor.id is None:
        return
    db.execute(
        update(Assignment)
        .where(Assignment.item_id == item_id, Assignment.user_id == actor.id, Assignment.opened_at.is_(None))
        .values(opened_at=utc_now())
    )


def own_decision(db: Session, actor: Actor, item_id: int) -> Decision | None:
    if actor.id is None:
        return None
    return db.scalar(select(Decision).where(Decision.item_id == item_id, Decision.user_id == actor.id))
