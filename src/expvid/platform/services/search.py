"""Searching and filtering items for the admin's items list and the JSON API.

Filters combine (all must hold): free text (release key and identity, question, experiment id; case-insensitive
substring), task, discipline, state, a flag kind (a build-audit flag such as `asr_leakage`, or the
platform's own `short_of_annotators`), and a reviewer (items assigned to that annotator or
adjudicated by that adjudicator). Flags live in a JSON column; they are matched on its text form,
which both backends write as `"kind": "<kind>"`, so no JSON operator specific to one backend is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from sqlalchemy import String, cast, exists, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select

from expvid.platform.db.models import Adjudication, Assignment, Item, User

SHORT_FLAG = "short_of_annotators"

#: Flag kinds the build audits and the platform write (docs/build.md), offered even before any item has one.
KNOWN_FLAGS = (
    "blind_answerable",
    "asr_leakage",
    "answer_in_question",
    "length_bias",
    "position_bias",
    "snapped_timestamps",
    "needs_expert_refinement",
    "rebuild_failed",
    "removed_upstream",
    "upstream_conflict",
    SHORT_FLAG,
)


@dataclass(frozen=True)
class ItemFilters:
    q: str | None = None
    task: str | None = None
    discipline: str | None = None
    state: str | None = None
    flag: str | None = None
    reviewer: str | None = None

    def active(self) -> dict[str, str]:
        """The filters that are set (for links that keep them)."""
        return {f.name: value for f in fields(self) if (value := getattr(self, f.name))}


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def filtered(filters: ItemFilters) -> Select[Item]:
    query = select(Item)
    if filters.q:
        pattern = _like(filters.q.strip())
        query = query.where(
            or_(
                Item.release_key.ilike(pattern, escape="\\"),
                Item.key.ilike(pattern, escape="\\"),
                Item.question.ilike(pattern, escape="\\"),
                Item.video_id.ilike(pattern, escape="\\"),
            )
        )
    if filters.task:
        query = query.where(Item.task == filters.task)
    if filters.discipline:
        query = query.where(Item.discipline == filters.discipline)
    if filters.state:
        query = query.where(Item.state == filters.state)
    if filters.flag == SHORT_FLAG:
        query = query.where(Item.short_of_annotators > 0)
    elif filters.flag:
        pattern = _like(f'"kind": "{filters.flag}"')
        query = query.where(cast(Item.flags, String).like(pattern, escape="\\"))
    if filters.reviewer:
        user_id = select(User.id).where(User.username == filters.reviewer).scalar_subquery()
        query = query.where(
            or_(
                exists().where(Assignment.item_id == Item.id, Assignment.user_id == user_id),
                exists().where(Adjudication.item_id == Item.id, Adjudication.user_id == user_id),
            )
        )
    return query


def search_items(db: Session, filters: ItemFilters, *, offset: int, limit: int) -> tuple[list[Item], int]:
    """One page of matching items (by id) and the number of matches."""
    query = filtered(filters)
    total = db.scalar(select(func.count()).select_from(query.subquery())) or 0
    items = list(db.scalars(query.order_by(Item.id).offset(offset).limit(limit)))
    return items, total


def flag_kinds(db: Session) -> list[str]:
    """Flag kinds present on items, with the known ones first."""
    seen: set[str] = set()
    for (flags,) in db.execute(select(Item.flags).where(cast(Item.flags, String) != "[]")):
        for flag in flags or []:
            if isinstance(flag, dict) and isinstance(flag.get("kind"), str):
                seen.add(flag["kind"])
    return [*KNOWN_FLAGS, *sorted(seen - set(KNOWN_FLAGS))]


def reviewers_on_items(db: Session, item_ids: list[int]) -> dict[int, list[str]]:
    """Annotators assigned to each of `item_ids` (the list shows who reviews what)."""
    names: dict[int, list[str]] = {i: [] for i in item_ids}
    if not item_ids:
        return names
    for item_id, username in db.execute(
        select(Assignment.item_id, User.username)
        .join(User, User.id == Assignment.user_id)
        .where(Assignment.item_id.in_(item_ids))
        .order_by(Assignment.item_id, Assignment.slot)
    ):
        names[item_id].append(username)
    return names
