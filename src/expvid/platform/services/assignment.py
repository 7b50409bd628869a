"""Routing items to two annotators each: by discipline and load, deterministically, never to the
item's creator.

ProMQA (section 3.3, appendix B.3) has every example judged by two annotators; ExpVid (appendix E)
keeps a pool of annotators per discipline. Here, each unassigned slot goes to the eligible annotator
with the fewest open assignments, ties broken by a hash of (item, user name) so that the same
database always yields the same assignment and pairs spread evenly over annotators.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, Item, User, utc_now
from expvid.platform.services import audit
from expvid.platform.services.access import discipline_matches
from expvid.platform.services.errors import SYSTEM, Actor

ANNOTATORS_PER_ITEM = 2


@dataclass
class AssignmentReport:
    assignments_created: int = 0
    items_fully_assigned: int = 0
    #: Discipline -> number of items that could not get two eligible annotators.
    short_of_annotators: dict[str, int] = field(default_factory=dict)


def _tie_break(item_key: str, username: str) -> str:
    return hashlib.sha256(f"{item_key}\x00{username}".encode()).hexdigest()


def assign_pending(db: Session, *, actor: Actor = SYSTEM) -> AssignmentReport:
    """Fill every open annotator slot that can be filled; returns what was done."""
    report = AssignmentReport()
    annotators = list(
        db.scalars(select(User).where(User.role == "annotator", User.active.is_(True)).order_by(User.id))
    )
    open_load = Counter(
        dict(
            db.execute(
                select(Assignment.user_id, func.count())
                .where(Assignment.completed_at.is_(None))
                .group_by(Assignment.user_id)
            ).all()
        )
    )
    items = list(db.scalars(select(Item).where(Item.state == "pending").order_by(Item.id).with_for_update()))
    if not items:
        return report
    existing: dict[int, dict[int, int]] = defaultdict(dict)  # item id -> {slot: user id}
    for item_id, slot, user_id in db.execute(
        select(Assignment.item_id, Assignment.slot, Assignment.user_id).where(
            Assignment.item_id.in_([i.id for i in items])
        )
    ):
        existing[item_id][slot] = user_id
    short: Counter[str] = Counter()
    now = utc_now()
    new_assignments: list[dict[str, object]] = []
    events: list[dict[str, object]] = []
    completed: list[int] = []
    for item in items:
        taken = existing[item.id]
        free_slots = [s for s in range(1, ANNOTATORS_PER_ITEM + 1) if s not in taken]
        eligible = [
            user
            for user in annotators
            if user.id not in taken.values()
            and user.id != item.created_by_user_id
            and user.username != item.creator
            and discipline_matches(user.disciplines or [], item.discipline)
        ]
        eligible.sort(key=lambda u: (open_load[u.id], _tie_break(item.key, u.username)))
        for slot, user in zip(free_slots, eligible, strict=False):
            new_assignments.append({"item_id": item.id, "user_id": user.id, "slot": slot, "assigned_at": now})
            open_load[user.id] += 1
            taken[slot] = user.id
            events.append(
                {"entity": "assignment", "entity_id": f"{item.id}/{slot}", "item_id": item.id,
                 "after": {"user": user.username, "slot": slot}}
            )  # fmt: skip
        if len(taken) >= ANNOTATORS_PER_ITEM:
            completed.append(item.id)
        else:
            short[item.discipline] += 1
    # Set-based writes: an import of ten thousand items makes twenty thousand assignments.
    if new_assignments:
        db.execute(insert(Assignment), new_assignments)
    audit.record_many(db, actor, "assignment.created", events)
    for start in range(0, len(completed), 500):
        db.execute(
            update(Item)
            .where(Item.id.in_(completed[start : start + 500]))
            .values(state="in_review", version=Item.version + 1, updated_at=now)
            .execution_options(synchronize_session="fetch")
        )
    report.assignments_created = len(new_assignments)
    report.items_fully_assigned = len(completed)
    report.short_of_annotators = dict(short)
    return report
