"""Progress dashboard: charts and tables of items by state, annotator throughput and agreement;
items that lack annotators (with a form to add one); accounts being guessed at (sign-in throttling)."""

from __future__ import annotations

from collections import defaultdict

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from expvid.platform.db.models import Item, User
from expvid.platform.security.throttle import clients_delayed, throttle_report
from expvid.platform.services.access import discipline_matches
from expvid.platform.services.assignment import eligible_annotators, short_items
from expvid.platform.services.reports import PAPER_MINUTES, STATES, activity, agreement_report, progress
from expvid.platform.web.charts import agreement_chart, progress_chart, throughput_chart
from expvid.platform.web.deps import ViewerDep, database_of, settings_of
from expvid.platform.web.render import page

router = APIRouter()


def _staffing(db: Session, short: list[Item]) -> list[dict[str, object]]:
    """Per discipline: items short of annotators, and who could be added to at least one of them
    (annotators of that discipline first; never someone already on the item or its author)."""
    by_discipline: dict[str, list[Item]] = defaultdict(list)
    for item in short:
        by_discipline[item.discipline].append(item)
    rows = []
    for discipline, items in sorted(by_discipline.items()):
        candidates: dict[str, User] = {}
        for item in items:
            for user in eligible_annotators(db, item):
                candidates.setdefault(user.username, user)
        ordered = sorted(candidates.values(), key=lambda u: u.username)
        matching = [u.username for u in ordered if discipline_matches(u.disciplines or [], discipline)]
        others = [u.username for u in ordered if u.username not in matching]
        rows.append(
            {"discipline": discipline, "items": items, "missing": sum(i.short_of_annotators for i in items),
             "matching": matching, "others": others}
        )  # fmt: skip
    return rows


@router.get("/dashboard", response_class=HTMLResponse)
def dashboard(request: Request, current: ViewerDep) -> Response:
    current.require("admin", "adjudicator")
    policy = settings_of(request).throttle
    with database_of(request).read() as db:
        report = progress(db)
        agreement = agreement_report(db)
        timeline = activity(db)
        admin = current.actor.role == "admin"
        staffing = _staffing(db, short_items(db)) if admin else []
        guessed = throttle_report(db, policy) if admin else []
        delayed_clients = clients_delayed(db, policy) if admin else []
    return page(
        request,
        "dashboard.html",
        {
            "progress": report, "agreement": agreement, "states": STATES, "paper_minutes": PAPER_MINUTES,
            "charts": {
                "progress": progress_chart(timeline),
                "throughput": throughput_chart(report.annotators),
                "agreement": agreement_chart(agreement.by_task),
            },
            "staffing": staffing, "guessed": guessed, "delayed_clients": delayed_clients,
            "throttle_free": policy.free_failures_per_pair,
            "notice": request.query_params.get("notice"),
        },
    )  # fmt: skip
