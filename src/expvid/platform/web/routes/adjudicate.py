"""Adjudication pages: conflicts with the judgements' sources hidden and shuffled."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from expvid.platform.db.models import Item
from expvid.platform.guidelines import guidelines_for
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.errors import Conflict, InvalidInput, NotFound
from expvid.platform.services.review import uses_step_editor
from expvid.platform.services.tasks import task_spec
from expvid.platform.web.deps import Viewer, ViewerDep, WriterDep, database_of, settings_of
from expvid.platform.web.forms import _int, content_from_form, echo, rows_from_form
from expvid.platform.web.render import page
from expvid.platform.web.views import media_for

router = APIRouter()


def _context(db: Session, current: Viewer, item_id: int) -> dict[str, object]:
    view = adjudication_view(db, current.actor, item_id)
    item = db.get(Item, item_id)
    assert item is not None  # adjudication_view raised NotFound otherwise
    return {
        "item": item,
        "view": view,
        "guide": guidelines_for(item.task),
        "media": media_for(item),
        "step_editor": uses_step_editor(item),
        "spec_kind": task_spec(item.task).kind,
    }


@router.get("/adjudicate/{item_id}", response_class=HTMLResponse)
def adjudication_page(item_id: int, request: Request, current: ViewerDep) -> Response:
    with database_of(request).read() as db:
        return page(request, "adjudicate.html", _context(db, current, item_id))


@router.post("/adjudicate/{item_id}", response_class=HTMLResponse)
async def adjudicate(item_id: int, request: Request, current: WriterDep) -> Response:
    form = await request.form()
    database = database_of(request)
    settings = settings_of(request)

    def work() -> Response:
        try:
            with database.read() as db:
                item = db.get(Item, item_id)
                if item is None:
                    raise NotFound(f"item {item_id} not found")
                outcome = str(form.get("outcome") or "")
                content = rows = None
                if outcome == "verified":
                    if uses_step_editor(item):
                        rows = rows_from_form(form)
                    else:
                        content = content_from_form(item, form)
                data = Resolution(
                    outcome=outcome,
                    justification=str(form.get("justification") or ""),
                    item_version=_int(form, "item_version"),
                    content=content,
                    rows=rows,
                )
            database.write_retry(
                lambda db: resolve(
                    db, current.actor, item_id, data, min_justification=settings.min_justification
                )
            )
        except (InvalidInput, Conflict) as error:
            with database.read() as db:
                context = _context(db, current, item_id)
                context["problems"] = error.problems if isinstance(error, InvalidInput) else [str(error)]
                context["form"] = echo(form)
                return page(
                    request,
                    "adjudicate.html",
                    context,
                    status_code=409 if isinstance(error, Conflict) else 422,
                )
        return RedirectResponse("/?notice=resolved", status_code=303)

    return await run_in_threadpool(work)
