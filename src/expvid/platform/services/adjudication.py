"""Adjudication of conflicting judgements, with sources hidden and shuffled (as the
procedural-QA recipe's paper prescribes, its appendix B.3).

The adjudicator sees the distinct candidate versions of the item (the draft as imported and each
annotator's edit, deduplicated) in a shuffled order under neutral labels, and the two judgements
(each "accepts version N" or "rejects the item", with its justification) without names, also
shuffled. Whether a version is the machine draft or a human edit is not shown: a source could bias
the call. The resolution picks a version (optionally refined) or rejects the item, with a
justification; which annotator the final content matched is recorded for the audit, not shown.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.config import InputLimits
from expvid.platform.db.models import Adjudication, Decision, Experiment, Item, Segment, utc_now
from expvid.platform.services import audit, limits
from expvid.platform.services.access import can_adjudicate
from expvid.platform.services.content import Content, ContentError, same_content, validate_content
from expvid.platform.services.errors import Actor, Conflict, Forbidden, InvalidInput, NotFound
from expvid.platform.services.level2 import (
    RebuildError,
    StepEditError,
    StepRow,
    apply_step_edit,
    normalized_rows,
    rebuild_content,
    rows_change_anything,
    rows_from_steps,
)
from expvid.platform.services.review import check_step_edit, lock_item, preview_step_edit, uses_step_editor
from expvid.platform.services.settlement import (
    apply_step_change,
    finalize,
    item_content,
    segment_steps,
    set_content,
)


@dataclass
class DerivedQuestion:
    """A Level-2 question of the segment as a step-list version would make it (or why it cannot)."""

    key: str
    task: str
    content: dict[str, Any] | None
    problem: str | None = None
    this_item: bool = False


@dataclass
class VersionCard:
    label: int
    #: This item's content under this version; None when the version's step list leaves the
    #: question impossible (a rejection that corrects the steps).
    content: dict[str, Any] | None
    #: Level-2: the step list of this version (rows), else empty.
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: Level-2: every question of the segment rebuilt from this version's step list.
    derived: list[DerivedQuestion] = field(default_factory=list)


@dataclass
class JudgementCard:
    label: str
    #: "accepts" or "rejects"
    stance: str
    #: The version accepted; for a rejection, the version whose step list it proposes (or None).
    version_label: int | None
    justification: str


@dataclass
class AdjudicationView:
    item_version: int
    versions: list[VersionCard]
    judgements: list[JudgementCard]


def _load_for_adjudication(db: Session, actor: Actor, item_id: int, *, lock: bool) -> Item:
    if actor.role not in ("adjudicator", "admin"):
        raise Forbidden("only adjudicators and admins resolve conflicts")
    item = lock_item(db, item_id) if lock else db.get(Item, item_id)
    if item is None:
        raise NotFound(f"item {item_id} not found")
    if not can_adjudicate(actor, item):
        if item.state != "conflict" and actor.role == "admin":
            raise Conflict(f"this item is not in conflict (it is {item.state})", current_version=item.version)
        raise NotFound(f"item {item_id} not found")
    return item


@dataclass
class _Candidate:
    content: dict[str, Any] | None
    rows: list[dict[str, Any]]


def _candidates(db: Session, item: Item) -> tuple[list[_Candidate], list[Decision]]:
    """Distinct candidates (content and step list), the current one first, and the live decisions.

    Step-list items compare candidates by their step list; a rejection that corrects the steps adds
    its step list as a candidate whose content is None (this question cannot be rebuilt from it).
    """
    decisions = list(
        db.scalars(
            select(Decision)
            .where(Decision.item_id == item.id, Decision.stale.is_(False))
            .order_by(Decision.id)
        )
    )
    current_rows: list[dict[str, Any]] = []
    if uses_step_editor(item):
        segment = db.get(Segment, item.segment_id)
        assert segment is not None
        current_rows = [r.as_dict() for r in rows_from_steps(segment_steps(segment))]
    candidates = [_Candidate(item_content(item).as_dict(), current_rows)]
    for decision in decisions:
        candidate = _proposed(decision)
        if candidate is not None and not any(_same_candidate(item, candidate, c) for c in candidates):
            candidates.append(candidate)
    return candidates, decisions


def _proposed(decision: Decision) -> _Candidate | None:
    if decision.proposal is None:
        return None
    rows = list(decision.proposal.get("steps", []))
    if decision.verdict == "edit":
        return _Candidate({k: decision.proposal.get(k) for k in ("question", "options", "answer")}, rows)
    if decision.verdict == "reject" and rows:
        return _Candidate(None, rows)
    return None


def _same_candidate(item: Item, a: _Candidate, b: _Candidate) -> bool:
    if uses_step_editor(item):
        return normalized_rows([StepRow.from_dict(r) for r in a.rows]) == normalized_rows(
            [StepRow.from_dict(r) for r in b.rows]
        )
    return a.content is not None and b.content is not None and same_content(a.content, b.content)


def derived_questions(db: Session, item: Item, rows: list[StepRow]) -> list[DerivedQuestion]:
    """Every Level-2 question of the item's segment as `rows` would rebuild it (for the adjudicator).

    The adjudicator decides a step list, and with it all four derived questions; seeing each
    version's questions (options and answers included) shows what accepting it really changes.
    """
    assert item.segment_id is not None and item.experiment_id is not None
    experiment = db.get(Experiment, item.experiment_id)
    segment = db.get(Segment, item.segment_id)
    assert experiment is not None and segment is not None
    old_segment = segment_steps(segment)
    siblings = list(
        db.scalars(select(Item).where(Item.segment_id == segment.id, Item.level == 2).order_by(Item.id))
    )
    try:
        change = apply_step_edit(
            experiment.full_steps, old_segment, rows, window=(segment.start, segment.end)
        )
    except StepEditError as error:
        return [
            DerivedQuestion(s.release_key, s.task, None, "; ".join(error.problems), s.id == item.id)
            for s in siblings
        ]
    derived = []
    for sibling in siblings:
        try:
            content = rebuild_content(
                sibling.task, item_content(sibling), key=sibling.release_key, old_full=experiment.full_steps,
                new_full=change.full_steps, old_segment=old_segment, new_segment=change.segment_steps,
                renumber=change.renumber,
            )  # fmt: skip
            derived.append(
                DerivedQuestion(
                    sibling.release_key, sibling.task, content.as_dict(), None, sibling.id == item.id
                )
            )
        except RebuildError as error:
            derived.append(
                DerivedQuestion(sibling.release_key, sibling.task, None, str(error), sibling.id == item.id)
            )
    return derived


def _shuffled(values: list[Any], seed: str) -> list[Any]:
    shuffled = list(values)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def adjudication_view(db: Session, actor: Actor, item_id: int) -> AdjudicationView:
    item = _load_for_adjudication(db, actor, item_id, lock=False)
    candidates, decisions = _candidates(db, item)
    # Seeded by item and version: a reload shows the same order; nothing about the order reveals sources.
    order = _shuffled(list(range(len(candidates))), f"versions:{item.key}:{item.version}")
    label_of = {index: position + 1 for position, index in enumerate(order)}
    step_items = uses_step_editor(item)
    versions = []
    for i in order:
        card = VersionCard(label_of[i], candidates[i].content, candidates[i].rows)
        if step_items:
            card.derived = derived_questions(db, item, [StepRow.from_dict(r) for r in card.rows])
        versions.append(card)
    cards = []
    for decision in decisions:
        if decision.verdict == "approve":
            cards.append(JudgementCard("", "accepts", label_of[0], decision.justification))
            continue
        proposed = _proposed(decision)
        endorsed = (
            None
            if proposed is None
            else next(i for i, c in enumerate(candidates) if _same_candidate(item, proposed, c))
        )
        stance = "rejects" if decision.verdict == "reject" else "accepts"
        label = None if endorsed is None else label_of[endorsed]
        cards.append(JudgementCard("", stance, label, decision.justification))
    cards = _shuffled(cards, f"judgements:{item.key}:{item.version}")
    for position, judgement in enumerate(cards):
        judgement.label = chr(ord("A") + position)
    return AdjudicationView(item_version=item.version, versions=versions, judgements=cards)


@dataclass(frozen=True)
class Resolution:
    outcome: str  # "verified" | "rejected"
    justification: str
    item_version: int
    content: Content | None = None
    #: Level-2: the step list to keep. With "verified", this question is rebuilt from it; with
    #: "rejected", it corrects the segment for its other questions (None = leave the steps alone).
    rows: list[StepRow] | None = None


def resolve(
    db: Session,
    actor: Actor,
    item_id: int,
    data: Resolution,
    *,
    min_justification: int = 5,
    bounds: InputLimits = limits.DEFAULT_LIMITS,
) -> Item:
    """Record the adjudicator's final call and settle the item.

    The final content may be one of the versions shown or the adjudicator's own refinement of one;
    the latter is applied like any other and recorded as `own_edit` (with the content itself) in the
    adjudication and the audit trail.
    """
    problems = limits.submission_problems(data.justification, data.content, data.rows, bounds)
    if problems:
        raise InvalidInput(problems)
    item = _load_for_adjudication(db, actor, item_id, lock=True)
    problems = []
    if data.outcome not in ("verified", "rejected"):
        problems.append("the outcome must be 'verified' or 'rejected'")
    if len(data.justification.strip()) < min_justification:
        problems.append(f"a justification of at least {min_justification} characters is required")
    if problems:
        raise InvalidInput(problems)
    if item.version != data.item_version:
        raise Conflict(
            f"the item changed since you opened it (version {data.item_version} -> {item.version}); reload",
            current_version=item.version,
        )
    candidates, decisions = _candidates(db, item)
    final: dict[str, Any] | None = None
    matched: list[int] = []
    own_edit = False
    justification = data.justification.strip()
    why = f"adjudication: {justification}"
    if data.outcome == "verified":
        if uses_step_editor(item):
            segment = db.get(Segment, item.segment_id)
            assert segment is not None
            rows = data.rows if data.rows is not None else rows_from_steps(segment_steps(segment))
            changed = rows_change_anything(segment_steps(segment), rows)
            derived = preview_step_edit(db, item, rows) if changed else item_content(item)
            final = {**derived.as_dict(), "steps": [r.as_dict() for r in rows]}
            chosen = _Candidate(final, [r.as_dict() for r in rows])
            own_edit = not any(_same_candidate(item, chosen, c) for c in candidates)
            for d in decisions:
                proposed = d.proposal.get("steps") if d.verdict == "edit" and d.proposal else None
                if (d.verdict == "approve" and not changed) or (
                    proposed is not None
                    and normalized_rows([StepRow.from_dict(r) for r in proposed]) == normalized_rows(rows)
                ):
                    matched.append(d.id)
            if changed:
                apply_step_change(db, actor, item=item, rows=rows, reason=why)
        else:
            content = data.content or item_content(item)
            try:
                validate_content(item.task, content)
            except ContentError as error:
                raise InvalidInput(error.problems) from None
            final = content.as_dict()
            own_edit = not any(c.content is not None and same_content(c.content, content) for c in candidates)
            original = item_content(item)
            for d in decisions:
                if (d.verdict == "approve" and same_content(content, original)) or (
                    d.verdict == "edit" and d.proposal is not None and same_content(d.proposal, content)
                ):
                    matched.append(d.id)
            set_content(db, actor, item, content, action="item.edited", reason=why)
    else:
        matched = [d.id for d in decisions if d.verdict == "reject"]
        if data.rows is not None and uses_step_editor(item):
            segment = db.get(Segment, item.segment_id)
            assert segment is not None
            if rows_change_anything(segment_steps(segment), data.rows):
                check_step_edit(db, item, data.rows)
                final = {"steps": [r.as_dict() for r in data.rows]}
                chosen = _Candidate(None, final["steps"])
                own_edit = not any(_same_candidate(item, chosen, c) for c in candidates)
                apply_step_change(db, actor, item=item, rows=data.rows, reason=why, rebuild_item=False)
    db.add(
        Adjudication(
            item_id=item.id,
            user_id=actor.id,
            outcome=data.outcome,
            content=final,
            matched_decisions=sorted(matched),
            justification=justification,
            item_version=item.version,
            created_at=utc_now(),
            own_edit=own_edit,
        )
    )
    finalize(db, actor, item, data.outcome, via="adjudication", reason=justification)
    audit.record(
        db, actor, "adjudication.recorded", entity="item", entity_id=item.id, item_id=item.id,
        after={"outcome": data.outcome, "matched_decisions": sorted(matched), "own_edit": own_edit,
               "content": final},
        reason=justification,
    )  # fmt: skip
    return item
