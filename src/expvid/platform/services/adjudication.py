"""Adjudication of conflicting judgements, with sources hidden and shuffled (ProMQA appendix B.3).

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

from expvid.platform.db.models import Adjudication, Decision, Item, Segment, utc_now
from expvid.platform.services import audit
from expvid.platform.services.access import can_adjudicate
from expvid.platform.services.content import Content, ContentError, same_content, validate_content
from expvid.platform.services.errors import Actor, Conflict, Forbidden, InvalidInput, NotFound
from expvid.platform.services.level2 import StepRow, normalized_rows, rows_change_anything, rows_from_steps
from expvid.platform.services.review import lock_item, preview_step_edit, uses_step_editor
from expvid.platform.services.settlement import (
    apply_step_change,
    finalize,
    item_content,
    segment_steps,
    set_content,
)


@dataclass
class VersionCard:
    label: int
    content: dict[str, Any]
    #: Level-2: the step list of this version (rows), else empty.
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class JudgementCard:
    label: str
    #: "accepts" or "rejects"
    stance: str
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


def _candidates(
    db: Session, item: Item
) -> tuple[list[tuple[dict[str, Any], list[dict[str, Any]]]], list[Decision]]:
    """Distinct (content, rows) candidates, the current content first, and the live decisions."""
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
    candidates = [(item_content(item).as_dict(), current_rows)]
    for decision in decisions:
        if decision.verdict != "edit" or decision.proposal is None:
            continue
        content = {k: decision.proposal.get(k) for k in ("question", "options", "answer")}
        rows = list(decision.proposal.get("steps", []))
        if not any(_same_candidate(item, (content, rows), c) for c in candidates):
            candidates.append((content, rows))
    return candidates, decisions


def _same_candidate(
    item: Item, a: tuple[dict[str, Any], list[dict[str, Any]]], b: tuple[dict[str, Any], list[dict[str, Any]]]
) -> bool:
    if uses_step_editor(item):
        return normalized_rows([StepRow.from_dict(r) for r in a[1]]) == normalized_rows(
            [StepRow.from_dict(r) for r in b[1]]
        )
    return same_content(a[0], b[0])


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
    versions = [VersionCard(label_of[i], candidates[i][0], candidates[i][1]) for i in order]
    cards = []
    for decision in decisions:
        if decision.verdict == "reject":
            cards.append(JudgementCard("", "rejects", None, decision.justification))
            continue
        if decision.verdict == "approve":
            endorsed = 0
        else:
            assert decision.proposal is not None
            content = {k: decision.proposal.get(k) for k in ("question", "options", "answer")}
            rows = list(decision.proposal.get("steps", []))
            endorsed = next(i for i, c in enumerate(candidates) if _same_candidate(item, (content, rows), c))
        cards.append(JudgementCard("", "accepts", label_of[endorsed], decision.justification))
    cards = _shuffled(cards, f"judgements:{item.key}:{item.version}")
    for position, card in enumerate(cards):
        card.label = chr(ord("A") + position)
    return AdjudicationView(item_version=item.version, versions=versions, judgements=cards)


@dataclass(frozen=True)
class Resolution:
    outcome: str  # "verified" | "rejected"
    justification: str
    item_version: int
    content: Content | None = None
    rows: list[StepRow] | None = None


def resolve(db: Session, actor: Actor, item_id: int, data: Resolution, *, min_justification: int = 5) -> Item:
    """Record the adjudicator's final call and settle the item."""
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
    decisions = list(
        db.scalars(select(Decision).where(Decision.item_id == item.id, Decision.stale.is_(False)))
    )
    final: dict[str, Any] | None = None
    matched: list[int] = []
    justification = data.justification.strip()
    if data.outcome == "verified":
        if uses_step_editor(item):
            segment = db.get(Segment, item.segment_id)
            assert segment is not None
            rows = data.rows if data.rows is not None else rows_from_steps(segment_steps(segment))
            changed = rows_change_anything(segment_steps(segment), rows)
            derived = preview_step_edit(db, item, rows) if changed else item_content(item)
            final = {**derived.as_dict(), "steps": [r.as_dict() for r in rows]}
            for d in decisions:
                proposed = d.proposal.get("steps") if d.verdict == "edit" and d.proposal else None
                if (d.verdict == "approve" and not changed) or (
                    proposed is not None
                    and normalized_rows([StepRow.from_dict(r) for r in proposed]) == normalized_rows(rows)
                ):
                    matched.append(d.id)
            if changed:
                apply_step_change(db, actor, item=item, rows=rows, reason=f"adjudication: {justification}")
        else:
            content = data.content or item_content(item)
            try:
                validate_content(item.task, content)
            except ContentError as error:
                raise InvalidInput(error.problems) from None
            final = content.as_dict()
            original = item_content(item)
            for d in decisions:
                if (d.verdict == "approve" and same_content(content, original)) or (
                    d.verdict == "edit" and d.proposal is not None and same_content(d.proposal, content)
                ):
                    matched.append(d.id)
            set_content(
                db, actor, item, content, action="item.edited", reason=f"adjudication: {justification}"
            )
    else:
        matched = [d.id for d in decisions if d.verdict == "reject"]
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
        )
    )
    finalize(db, actor, item, data.outcome, via="adjudication", reason=justification)
    audit.record(
        db, actor, "adjudication.recorded", entity="item", entity_id=item.id, item_id=item.id,
        after={"outcome": data.outcome, "matched_decisions": sorted(matched)}, reason=justification,
    )  # fmt: skip
    return item
