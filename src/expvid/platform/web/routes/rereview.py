"""The re-review queue page: items a validity audit flagged that still wait for a verdict."""

from __future__ import annotations

from typing import Any

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


@router.get("/api/rereview")
def rereview_json(request: Request, current: ViewerDep) -> dict[str, Any]:
    """The same list for scripts: each item's id, key, task, state and flags."""
    with database_of(request).read() as db:
        rows = queue_rows(db, current.actor)
        return {
            "items": [
                {
                    "id": item.id,
                    "key": item.release_key,
                    "task": item.task,
                    "state": item.state,
                    "flags": flags,
                }
                for item, flags in rows
            ]
        }
