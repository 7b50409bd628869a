"""Who may see which item.

- annotators: only items assigned to them (blind: never the other annotator's decision);
- adjudicators: items in conflict within their disciplines, and items they adjudicated;
- admins: everything.
Anything else is reported as "not found", so that an id guess tells nothing about other items.
"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Adjudication, Assignment, Item
from expvid.platform.services.errors import Actor, NotFound


def discipline_matches(disciplines: tuple[str, ...] | list[str], discipline: str | None) -> bool:
    """An empty discipline list means "any discipline"."""
    if not disciplines:
        return True
    return (discipline or "").casefold() in {d.casefold() for d in disciplines}


def assignment_for(db: Session, actor: Actor, item_id: int) -> Assignment | None:
    if actor.id is None:
        return None
    return db.scalar(select(Assignment).where(Assignment.item_id == item_id, Assignment.user_id == actor.id))


def can_view(db: Session, actor: Actor, item: Item) -> bool:
    if actor.role == "admin":
        return True
    if actor.role == "annotator":
        return assignment_for(db, actor, item.id) is not None
    if actor.role == "adjudicator":
        if item.state == "conflict" and discipline_matches(actor.disciplines, item.discipline):
            return True
        return bool(
            db.scalar(
                select(exists().where(Adjudication.item_id == item.id, Adjudication.user_id == actor.id))
            )
        )
    return False


def can_adjudicate(actor: Actor, item: Item) -> bool:
    return (
        actor.role in ("adjudicator", "admin")
        and item.state == "conflict"
        and (actor.role == "admin" or discipline_matches(actor.disciplines, item.discipline))
    )


def get_visible_item(db: Session, actor: Actor, item_id: int, *, for_update: bool = False) -> Item:
    statement = select(Item).where(Item.id == item_id)
    if for_update:
        statement = statement.with_for_update()
    item = db.scalar(statement)
    if item is None or not can_view(db, actor, item):
        raise NotFound(f"item {item_id} not found")
    return item
