"""Adjudication pages: conflicts with the judgements' sources hidden and shuffled.

For Level-2 items each version card shows its step list and every question of the segment as that
list would rebuild it; the adjudicator may refine a version's steps (or text) before accepting it,
and may reject the question while keeping a version's step-list correction for the others.
A refused resolution redirects back with the form kept (POST-redirect-GET).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from expvid.platform.db.models import Item, Segment
from expvid.platform.guidelines import guidelines_for
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.errors import Conflict, InvalidInput, NotFound
from expvid.platform.services.level2 import StepRow
from expvid.platform.services.recipe_hooks import judged_pages_for
from expvid.platform.services.review import uses_step_editor
from expvid.platform.services.tasks import task_spec
from expvid.platform.web.audit_views import audit_findings
from expvid.platform.web.deps import FormDep, Viewer, ViewerDep, WriterDep, database_of, settings_of
from expvid.platform.web.drafts import drop_drafts, load_draft, refused
from expvid.platform.web.forms import _int, content_from_form, echo, rows_from_form
from expvid.platform.web.media_info import frame_rate
from expvid.platform.web.path_params import ItemId
from expvid.platform.web.render import page
from expvid.platform.web.submissions import write_submission
from expvid.platform.web.views import media_file, media_for, timeline_for

router = APIRouter()


def _context(db: Session, current: Viewer, item_id: int) -> dict[str, object]:
    view = adjudication_view(db, current.actor, item_id)
    item = db.get(Item, item_id)
    assert item is not None  # adjudication_view raised NotFound otherwise
    media = media_for(item)
    segment = None
    if uses_step_editor(item):
        segment = db.get(Segment, item.segment_id)
    return {
        "item": item,
        "view": view,
        "guide": guidelines_for(item.task),
        "media": media,
        "timeline": timeline_for(item, media, segment),
        "segment": segment,
        "step_editor": uses_step_editor(item),
        "spec_kind": task_spec(item.task).kind,
        "next_url": f"/next/{item.id}",
        "fps": frame_rate(path) if (path := media_file(db, item)) is not None else None,
    }


@router.get("/adjudicate/{item_id}", response_class=HTMLResponse)
def adjudication_page(
    item_id: ItemId,
    request: Request,
    current: ViewerDep,
    draft: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    database = database_of(request)
    with database.read() as db:
        item = db.get(Item, item_id)
        judged = judged_pages_for(item) if item is not None else None  # a recipe's page kind `procedural`
    if judged is not None and current.actor.role == "adjudicator":
        with database.write() as db:
            judged.mark_adjudication_opened(db, current.actor, item_id)
    with database.read() as db:
        if judged is not None:
            context = judged.adjudication_context(db, current.actor, item_id)
        else:
            context = _context(db, current, item_id)
        kept = load_draft(db, current.session.session_id, f"/adjudicate/{item_id}", draft)
        shown = db.get(Item, item_id)
        if shown is not None:
            context["audit_findings"] = audit_findings(db, shown)
        if kept is not None:
            context["problems"] = kept.problems
            context["form"] = kept.data
        return page(
            request, judged.adjudication_template if judged is not None else "adjudicate.html", context
        )


def _rows_of_version(db: Session, current: Viewer, item_id: int, label: str) -> list[StepRow] | None:
    """The step list of the version labelled `label` (a rejection that keeps a correction)."""
    if not label:
        return None
    view = adjudication_view(db, current.actor, item_id)
    for version in view.versions:
        if str(version.label) == label:
            return [StepRow.from_dict(r) for r in version.rows]
    raise InvalidInput([f"there is no version {label[:8]!r}; reload the page"])


@router.post("/adjudicate/{item_id}", response_class=HTMLResponse)
def adjudicate(item_id: ItemId, request: Request, current: WriterDep, form: FormDep) -> Response:
    database = database_of(request)
    settings = settings_of(request)
    with database.read() as db:
        found = db.get(Item, item_id)
        judged = judged_pages_for(found) if found is not None else None  # a recipe's page kind `procedural`
    try:
        if judged is not None:
            resolution = judged.resolution_from_form(form)
            database.write_retry(
                lambda db: judged.resolve(db, current.actor, item_id, resolution, bounds=settings.limits)
            )
            with database.write() as db:
                drop_drafts(db, current.session.session_id, f"/adjudicate/{item_id}")
            return RedirectResponse("/?notice=resolved", status_code=303)
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
            elif uses_step_editor(item):
                rows = _rows_of_version(db, current, item_id, str(form.get("keep_steps_of") or ""))
            data = Resolution(
                outcome=outcome,
                justification=str(form.get("justification") or ""),
                item_version=_int(form, "item_version"),
                content=content,
                rows=rows,
            )
        write_submission(request, resolve, current.actor, item_id, data)
    except (InvalidInput, Conflict) as error:
        return refused(request, current, f"/adjudicate/{item_id}", echo(form), error)
    with database.write() as db:
        drop_drafts(db, current.session.session_id, f"/adjudicate/{item_id}")
    return RedirectResponse("/?notice=resolved", status_code=303)
