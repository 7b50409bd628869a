"""The start page of each role: an annotator's queue, an adjudicator's conflicts, an admin's overview."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, Decision, Item, User
from expvid.platform.services.access import discipline_matches
from expvid.platform.services.reports import STATES
from expvid.platform.services.search import ItemFilters, flag_kinds, reviewers_on_items, search_items
from expvid.platform.services.tasks import TASKS
from expvid.platform.web.deps import Viewer, ViewerDep, database_of
from expvid.platform.web.item_filters import FiltersQuery, PageOffset
from expvid.platform.web.render import page

router = APIRouter()
PAGE_SIZE = 100


@dataclass(frozen=True)
class QueueRow:
    item: Item
    #: The annotator's own status: "to review", "review again", "submitted", "closed" or
    #: "removed upstream".
    status: str
    decision: Decision | None


def annotator_queue(db: Session, current: Viewer) -> list[QueueRow]:
    """The annotator's items with *their own* status only (blind: nothing about the other judgement)."""
    rows = db.execute(
        select(Item, Assignment, Decision)
        .join(Assignment, (Assignment.item_id == Item.id) & (Assignment.user_id == current.actor.id))
        .outerjoin(Decision, (Decision.item_id == Item.id) & (Decision.user_id == current.actor.id))
        .order_by(Assignment.completed_at.is_not(None), Item.id)
    ).all()
    queue = []
    for item, assignment, decision in rows:
        open_for_review = item.state in ("pending", "in_review")
        if not open_for_review:
            status = "removed upstream" if item.state == "removed" else "closed"
        elif assignment.completed_at is None:
            status = "to review" if decision is None or not decision.stale else "review again"
        else:
            status = "submitted"
        queue.append(QueueRow(item=item, status=status, decision=decision))
    return queue


@router.get("/", response_class=HTMLResponse)
def home(request: Request, current: ViewerDep) -> Response:
    with database_of(request).read() as db:
        if current.actor.role == "annotator":
            queue = annotator_queue(db, current)
            todo = sum(1 for row in queue if row.status in ("to review", "review again"))
            return page(
                request,
                "queue.html",
                {"queue": queue, "todo": todo, "notice": request.query_params.get("notice")},
            )
        if current.actor.role == "adjudicator":
            conflicts = [
                item
                for item in db.scalars(select(Item).where(Item.state == "conflict").order_by(Item.id))
                if discipline_matches(current.actor.disciplines, item.discipline)
            ]
            return page(
                request,
                "conflicts.html",
                {"conflicts": conflicts, "notice": request.query_params.get("notice")},
            )
        return items_page(request, current, ItemFilters())


@router.get("/items", response_class=HTMLResponse)
def items_page(
    request: Request,
    current: ViewerDep,
    filters: FiltersQuery,
    offset: PageOffset = 0,
) -> Response:
    """Admin browser over all items: text search and filters by task, discipline, state, flag, reviewer."""
    current.require("admin")
    with database_of(request).read() as db:
        items, total = search_items(db, filters, offset=offset, limit=PAGE_SIZE)
        disciplines = [d for (d,) in db.execute(select(Item.discipline).distinct().order_by(Item.discipline))]
        reviewers = list(
            db.scalars(
                select(User.username)
                .where(User.role.in_(("annotator", "adjudicator")))
                .order_by(User.username)
            )
        )
        reviewers_of = reviewers_on_items(db, [i.id for i in items])
        flags = flag_kinds(db)
    return page(
        request,
        "items.html",
        {
            "items": items, "total": total, "offset": offset, "page_size": PAGE_SIZE,
            "states": STATES, "tasks": list(TASKS), "disciplines": disciplines, "flags": flags,
            "reviewers": reviewers, "reviewers_of": reviewers_of,
            "filters": filters, "active": filters.active(),
            "notice": request.query_params.get("notice"),
        },
    )  # fmt: skip
