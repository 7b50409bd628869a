"""The re-review queue page: items a validity audit flagged that still wait for a verdict."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from expvid.platform.web.audit_views import queue_rows
from expvid.platform.web.deps import ViewerDep, database_of
from expvid.platform.web.render import page

router = APIRouter()


@router.get("/rereview", response_class=HTMLResponse)
def rereview_page(request: Request, current: ViewerDep) -> Response:
    with database_of(request).read() as db:
        rows = queue_rows(db, current.actor)
    return page(request, "rereview.html", {"rows": rows})
