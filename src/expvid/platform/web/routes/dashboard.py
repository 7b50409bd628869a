"""Progress dashboard: items by state per discipline and task, annotator throughput, agreement."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from expvid.platform.services.reports import PAPER_MINUTES, STATES, agreement_report, progress
from expvid.platform.web.deps import ViewerDep, database_of
from expvid.platform.web.render import page

router = APIRouter()


@router.get("/dashboard", response_class=HTMLResponse)
def dashboard(request: Request, current: ViewerDep) -> Response:
    current.require("admin", "adjudicator")
    with database_of(request).read() as db:
        report = progress(db)
        agreement = agreement_report(db)
    return page(
        request,
        "dashboard.html",
        {"progress": report, "agreement": agreement, "states": STATES, "paper_minutes": PAPER_MINUTES},
    )
