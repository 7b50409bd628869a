"""Routing items to their annotators (two each by default): by discipline and load,
deterministically, never to the item's creator.

Double annotation (every example judged by two annotators, as the procedural-QA recipe's paper
does); ExpVid (appendix E) keeps a pool of annotators per discipline. An item needs `Item.annotators_required` judgements
(1-5, fixed when it is imported; `services/campaign_settings.py`), one per slot. Here, each unassigned slot goes to the eligible annotator
with the fewest open assignments, ties broken by a hash of (item, user name) so that the same
database always yields the same assignment and pairs spread evenly over annotators.

An item with fewer eligible annotators than it needs (a discipline nobody on the team covers, or
only its own author) would never settle. Such items get the slots that can be filled, are marked
with the number still missing (`Item.short_of_annotators`, audited when it changes), and are listed
on the dashboard, where an admin adds an annotator (`add_annotator`), even one outside the item's
discipline, which is then recorded as such.

People leave and change roles: an open assignment of someone who is no longer an active annotator
(deactivated, or given another role), or one an admin takes back ("reassign"), is *released*
(`release_assignments`): the slot is freed, the item is marked short of an annotator, and the next
assignment run fills it. Double-blind rules hold for every new slot: nobody gets an item they
already decided (even a decision made stale since), nor one they gave back.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, Decision, Item, ReleasedAssignment, User, utc_now
from expvid.platform.services import audit
from expvid.platform.services.access import discipline_matches
from expvid.platform.services.errors import SYSTEM, Actor, Conflict, Forbidden, InvalidInput, NotFound


@dataclass
class AssignmentReport:
    assignments_created: int = 0
    items_fully_assigned: int = 0
    #: Discipline -> number of items that could not get all the eligible annotators they need.
    short_of_annotators: dict[str, int] = field(default_factory=dict)


def _tie_break(item_key: str, username: str) -> str:
    """Hash of (release key, user): the same candidate files give the same assignment wherever the
    folder lies (a directory without uids has a path-derived identity)."""
    return hashlib.sha256(f"{item_key}\x00{username}".encode()).hexdigest()


OPEN = ("pending", "in_review")


def _barred(db: Session, item_ids: list[int]) -> dict[int, set[int]]:
    """Users who may never get a slot on each item automatically: they decided it, or gave it back."""
    barred: dict[int, set[int]] = defaultdict(set)
    for start in range(0, len(item_ids), 500):
        chunk = item_ids[start : start + 500]
        for item_id, user_id in db.execute(
            select(Decision.item_id, Decision.user_id).where(Decision.item_id.in_(chunk))
        ):
            barred[item_id].add(user_id)
        for item_id, user_id in db.execute(
            select(ReleasedAssignment.item_id, ReleasedAssignment.user_id).where(
                ReleasedAssignment.item_id.in_(chunk)
            )
        ):
            barred[item_id].add(user_id)
    return barred


def release_assignments(
    db: Session, actor: Actor, user_id: int, *, reason: str, item_ids: list[int] | None = None
) -> list[int]:
    """Take back `user_id`'s open assignments on open items (all, or those of `item_ids`).

    Each is recorded (`released_assignments`, and an audit event) and deleted; its item is marked
    short of one more annotator and keeps its state, version and the other annotator's work, so
    nobody's open page is invalidated. Returns the item ids. The caller runs `assign_pending` to
    fill the slots.
    """
    query = (
        select(Assignment, Item)
        .join(Item, Item.id == Assignment.item_id)
        .where(Assignment.user_id == user_id, Assignment.completed_at.is_(None), Item.state.in_(OPEN))
        .order_by(Item.id)
        .with_for_update()
    )
    if item_ids is not None:
        query = query.where(Assignment.item_id.in_(item_ids))
    rows = db.execute(query).all()
    if not rows:
        return []
    name = db.scalar(select(User.username).where(User.id == user_id)) or str(user_id)
    now = utc_now()
    db.execute(
        insert(ReleasedAssignment),
        [{"item_id": a.item_id, "user_id": user_id, "slot": a.slot, "assigned_at": a.assigned_at,
          "opened_at": a.opened_at, "released_at": now, "released_by": actor.name, "reason": reason}
         for a, _ in rows],
    )  # fmt: skip
    audit.record_many(
        db, actor, "assignment.released",
        [{"entity": "assignment", "entity_id": f"{a.item_id}/{a.slot}", "item_id": a.item_id,
          "before": {"user": name, "slot": a.slot, "opened": a.opened_at is not None}, "reason": reason}
         for a, _ in rows],
    )  # fmt: skip
    db.execute(delete(Assignment).where(Assignment.id.in_([a.id for a, _ in rows])))
    for _, item in rows:
        item.short_of_annotators = (item.short_of_annotators or 0) + 1
    return [item.id for _, item in rows]


def release_stranded(db: Session, actor: Actor = SYSTEM) -> int:
    """Release open assignments held by accounts that can no longer review (inactive, or no longer
    annotators): databases from before releases existed had such items waiting forever."""
    holders = db.scalars(
        select(Assignment.user_id)
        .join(User, User.id == Assignment.user_id)
        .join(Item, Item.id == Assignment.item_id)
        .where(
            Assignment.completed_at.is_(None),
            Item.state.in_(OPEN),
            or_(User.active.is_(False), User.role != "annotator"),
        )
        .distinct()
    ).all()
    released = 0
    for user_id in holders:
        released += len(
            release_assignments(
                db, actor, user_id, reason="the annotator can no longer review (inactive or other role)"
            )
        )
    return released


def assign_pending(db: Session, *, actor: Actor = SYSTEM) -> AssignmentReport:
    """Fill every open annotator slot that can be filled; returns what was done."""
    report = AssignmentReport()
    release_stranded(db, actor)
    annotators = list(
        db.scalars(select(User).where(User.role == "annotator", User.active.is_(True)).order_by(User.id))
    )
    open_load = Counter(
        dict(
            db.execute(
                select(Assignment.user_id, func.count())
                .join(Item, Item.id == Assignment.item_id)
                .where(Assignment.completed_at.is_(None), Item.state.in_(OPEN))
                .group_by(Assignment.user_id)
            ).all()
        )
    )
    items = list(
        db.scalars(
            select(Item)
            .where(or_(Item.state == "pending", (Item.state == "in_review") & (Item.short_of_annotators > 0)))
            .order_by(Item.id)
            .with_for_update()
        )
    )
    if not items:
        return report
    existing: dict[int, dict[int, int]] = defaultdict(dict)  # item id -> {slot: user id}
    ids = [i.id for i in items]
    for start in range(0, len(ids), 500):
        for item_id, slot, user_id in db.execute(
            select(Assignment.item_id, Assignment.slot, Assignment.user_id).where(
                Assignment.item_id.in_(ids[start : start + 500])
            )
        ):
            existing[item_id][slot] = user_id
    barred = _barred(db, ids)
    short: Counter[str] = Counter()
    shortfall: dict[int, int] = {}
    now = utc_now()
    new_assignments: list[dict[str, object]] = []
    events: list[dict[str, object]] = []
    completed: list[int] = []
    events_short: list[dict[str, object]] = []
    for item in items:
        taken = existing[item.id]
        needed = item.annotators_required
        free_slots = [s for s in range(1, needed + 1) if s not in taken]
        eligible = [
            user
            for user in annotators
            if user.id not in taken.values()
            and user.id not in barred[item.id]
            and user.id != item.created_by_user_id
            and user.username != item.creator
            and discipline_matches(user.disciplines or [], item.discipline)
        ]
        eligible.sort(key=lambda u: (open_load[u.id], _tie_break(item.release_key, u.username)))
        for slot, user in zip(free_slots, eligible, strict=False):
            new_assignments.append({"item_id": item.id, "user_id": user.id, "slot": slot, "assigned_at": now})
            open_load[user.id] += 1
            taken[slot] = user.id
            events.append(
                {"entity": "assignment", "entity_id": f"{item.id}/{slot}", "item_id": item.id,
                 "after": {"user": user.username, "slot": slot}}
            )  # fmt: skip
        if len(taken) >= needed:
            if item.state == "pending":
                completed.append(item.id)
        else:
            short[item.discipline] += 1
        missing = max(0, needed - len(taken))
        if missing != item.short_of_annotators:
            shortfall[item.id] = missing
            if missing:
                events_short.append(
                    {"entity": "item", "entity_id": item.id, "item_id": item.id,
                     "before": {"short_of_annotators": item.short_of_annotators},
                     "after": {"short_of_annotators": missing, "eligible": len(taken),
                               "discipline": item.discipline}}
                )  # fmt: skip
    # Set-based writes: an import of ten thousand items makes twenty thousand assignments.
    if new_assignments:
        db.execute(insert(Assignment), new_assignments)
    audit.record_many(db, actor, "assignment.created", events)
    audit.record_many(db, actor, "assignment.short", events_short)
    # On the loaded objects (one batched UPDATE at flush): a statement per item made the session
    # re-check every loaded item each time (quadratic at ten thousand items).
    by_id = {item.id: item for item in items}
    for item_id, missing in shortfall.items():
        by_id[item_id].short_of_annotators = missing
    # A pending item with all its annotators goes to review (a new version: its state changed); an
    # item already in review that got a replacement annotator keeps its version, so the other
    # annotator's open page stays valid.
    for start in range(0, len(completed), 500):
        db.execute(
            update(Item)
            .where(Item.id.in_(completed[start : start + 500]))
            .values(state="in_review", version=Item.version + 1, updated_at=now)
            .execution_options(synchronize_session="fetch")
        )
    report.assignments_created = len(new_assignments)
    report.items_fully_assigned = sum(
        1 for item in items if len(existing[item.id]) >= item.annotators_required
    )
    report.short_of_annotators = dict(short)
    return report


def eligible_annotators(db: Session, item: Item) -> list[User]:
    """Active annotators who may be added to `item`: not its author, not on it, not one who decided it."""
    taken = set(db.scalars(select(Assignment.user_id).where(Assignment.item_id == item.id)))
    taken |= set(db.scalars(select(Decision.user_id).where(Decision.item_id == item.id)))
    return [
        user
        for user in db.scalars(
            select(User).where(User.role == "annotator", User.active.is_(True)).order_by(User.username)
        )
        if user.id not in taken and user.id != item.created_by_user_id and user.username != item.creator
    ]


def add_annotator(db: Session, actor: Actor, item_id: int, username: str) -> Assignment:
    """An admin gives an item that lacks annotators to `username` (outside their disciplines if need be).

    The item goes to review once it has all its annotators, exactly as after an assignment run.
    """
    if actor.role != "admin":
        raise Forbidden("only admins add annotators to items")
    item = db.scalar(select(Item).where(Item.id == item_id).with_for_update())
    if item is None:
        raise NotFound(f"item {item_id} not found")
    if item.state not in ("pending", "in_review"):
        raise Conflict(
            f"this item is {item.state}; only open items take annotators", current_version=item.version
        )
    user = db.scalar(select(User).where(User.username == username))
    if user is None:
        raise InvalidInput([f"no user {username!r}"])
    if user.role != "annotator" or not user.active:
        raise InvalidInput([f"{username} is not an active annotator"])
    if user.id == item.created_by_user_id or user.username == item.creator:
        raise InvalidInput([f"{username} wrote this item and cannot review it"])
    release_stranded(db, actor)
    taken = dict(
        db.execute(select(Assignment.slot, Assignment.user_id).where(Assignment.item_id == item.id)).all()
    )
    if user.id in taken.values():
        raise InvalidInput([f"{username} already reviews this item"])
    if db.scalar(select(Decision.id).where(Decision.item_id == item.id, Decision.user_id == user.id)):
        raise InvalidInput(
            [f"{username} already decided this item once; a second judgement must come from someone else"]
        )
    free = [slot for slot in range(1, item.annotators_required + 1) if slot not in taken]
    if not free:
        raise Conflict("this item already has all its annotators", current_version=item.version)
    now = utc_now()
    assignment = Assignment(item_id=item.id, user_id=user.id, slot=free[0], assigned_at=now)
    db.add(assignment)
    db.flush()
    outside = not discipline_matches(user.disciplines or [], item.discipline)
    missing = len(free) - 1
    audit.record(
        db, actor, "assignment.created", entity="assignment", entity_id=f"{item.id}/{free[0]}", item_id=item.id,
        after={"user": username, "slot": free[0], "added_by_admin": True, "outside_disciplines": outside},
        reason=f"added by an admin: item was short of {len(free)} annotator(s)"
        + (f"; {username} does not list {item.discipline}" if outside else ""),
    )  # fmt: skip
    item.short_of_annotators = missing
    if missing == 0 and item.state == "pending":
        item.state = "in_review"
        item.version += 1
        item.updated_at = now
    return assignment


def short_items(db: Session, limit: int = 200) -> list[Item]:
    """Open items still missing annotators, oldest first (for the dashboard)."""
    return list(
        db.scalars(
            select(Item)
            .where(Item.short_of_annotators > 0, Item.state.in_(("pending", "in_review")))
            .order_by(Item.id)
            .limit(limit)
        )
    )
