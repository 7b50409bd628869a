"""Review pages: one item with its video, guidelines and the decision form (per task type).

A refused save redirects back to the item page with the typed form kept as a draft
(POST-redirect-GET, `web/drafts.py`), so reloading the page never posts again.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, Item, Segment
from expvid.platform.services.access import get_visible_item
from expvid.platform.services.authoring import create_level3_question
from expvid.platform.services.errors import Conflict, InvalidInput
from expvid.platform.services.level2 import rows_from_steps
from expvid.platform.services.recipe_hooks import hooks_for_task, judged_pages_for
from expvid.platform.services.review import mark_opened, submit_decision, uses_step_editor
from expvid.platform.services.settlement import segment_steps
from expvid.platform.web.audit_views import audit_findings
from expvid.platform.web.deps import FormDep, Viewer, ViewerDep, WriterDep, database_of, settings_of
from expvid.platform.web.drafts import drop_drafts, load_draft, refused
from expvid.platform.web.forms import decision_from_form, echo
from expvid.platform.web.path_params import ItemId
from expvid.platform.web.render import page
from expvid.platform.web.submissions import write_submission
from expvid.platform.web.views import next_url, review_context, visible_history

router = APIRouter()
DraftToken = Annotated[str | None, Query(max_length=64)]


def _template(item: Item) -> str:
    if item.level == 3:
        return "review_blanks.html"
    if uses_step_editor(item):
        return "review_steps.html"
    return "review_content.html"


@router.get("/items/{item_id}", response_class=HTMLResponse)
def review_page(item_id: ItemId, request: Request, current: ViewerDep, draft: DraftToken = None) -> Response:
    database = database_of(request)
    with database.read() as db:
        item = get_visible_item(db, current.actor, item_id)
        if current.actor.role == "adjudicator" and item.state == "conflict":
            return RedirectResponse(f"/adjudicate/{item.id}", status_code=303)
        first_visit = (
            current.actor.role == "annotator"
            and db.scalar(
                select(Assignment.opened_at).where(
                    Assignment.item_id == item.id, Assignment.user_id == current.actor.id
                )
            )
            is None
        )
    if first_visit:
        with database.write() as db:
            mark_opened(db, current.actor, item_id)
    with database.read() as db:
        item = get_visible_item(db, current.actor, item_id)
        kept = load_draft(db, current.session.session_id, f"/items/{item_id}", draft)
        data = dict(kept.data) if kept else {}
        which = data.pop("__form__", "decision")
        judged = judged_pages_for(item)  # a recipe's page kind `procedural`
        if judged is not None:
            context = judged.review_context(
                db, current.actor, item, form=data, problems=kept.problems if kept else None
            )
            context["conflict"] = bool(kept and kept.conflict)
            context["notice"] = request.query_params.get("notice")
            context["audit_findings"] = audit_findings(db, item)
            return page(request, judged.review_template, context)
        context = review_context(
            db,
            current.actor,
            item,
            form=data,
            problems=kept.problems if kept and which == "decision" else None,
        )
        if kept and which == "author":
            context["author_problems"] = kept.problems
        context["conflict"] = bool(kept and kept.conflict)
        context["notice"] = request.query_params.get("notice")
        context["audit_findings"] = audit_findings(db, item)
        if draft and kept is None:
            context["notice"] = "The unsaved form has expired; this is the item as it stands."
        return page(request, _template(item), context)


def _next_item(db: Session, current: Viewer) -> int | None:
    return db.scalar(
        select(Assignment.item_id)
        .join(Item, Item.id == Assignment.item_id)
        .where(
            Assignment.user_id == current.actor.id,
            Assignment.completed_at.is_(None),
            Item.state.in_(("pending", "in_review")),
        )
        .order_by(Assignment.item_id)
        .limit(1)
    )


@router.post("/items/{item_id}/decision", response_class=HTMLResponse)
def save_decision(item_id: ItemId, request: Request, current: WriterDep, form: FormDep) -> Response:
    database = database_of(request)
    settings = settings_of(request)
    try:
        with database.read() as db:
            visible = get_visible_item(db, current.actor, item_id)
            pages = judged_pages_for(visible)
            if pages is not None:
                judged = pages.judgement_from_form(visible, form)
        if pages is not None:
            database.write_retry(
                lambda db: pages.submit_judgement(db, current.actor, item_id, judged, bounds=settings.limits)
            )
            return _saved(request, current, item_id)
        with database.read() as db:
            item = get_visible_item(db, current.actor, item_id)
            current_rows = []
            if uses_step_editor(item):
                segment = db.get(Segment, item.segment_id)
                assert segment is not None
                current_rows = rows_from_steps(segment_steps(segment))
            data = decision_from_form(
                item, form, step_editor=uses_step_editor(item), current_rows=current_rows
            )
        write_submission(request, submit_decision, current.actor, item_id, data)
    except (InvalidInput, Conflict) as error:
        data_kept = {**echo(form), "__form__": "decision"}
        return refused(request, current, f"/items/{item_id}", data_kept, error)
    return _saved(request, current, item_id)


def _saved(request: Request, current: Viewer, item_id: int) -> Response:
    """After a save: drop the kept form, go to the reviewer's next open item."""
    database = database_of(request)
    with database.write() as db:
        drop_drafts(db, current.session.session_id, f"/items/{item_id}")
    with database.read() as db:
        following = _next_item(db, current)
    target = f"/items/{following}?notice=saved" if following else "/?notice=saved"
    return RedirectResponse(target, status_code=303)


@router.get("/next/{item_id}")
def next_item(item_id: ItemId, request: Request, current: ViewerDep) -> Response:
    """The "next item" key: the reviewer's next open item after `item_id` (wrapping around)."""
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        target = next_url(db, current.actor, item) or "/items"
    return RedirectResponse(target, status_code=303)


@router.get("/items/{item_id}/history", response_class=HTMLResponse)
def history_page(item_id: ItemId, request: Request, current: ViewerDep) -> Response:
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        events = visible_history(db, current.actor, item)
        return page(request, "history.html", {"item": item, "events": events})


@router.post("/experiments/{video_id}/questions", response_class=HTMLResponse)
def write_question(video_id: str, request: Request, current: WriterDep, form: FormDep) -> Response:
    """A new Level-3 fill-in-the-blank question, written beside the paper and the full video."""
    database = database_of(request)
    settings = settings_of(request)
    back = str(form.get("back_item") or "")

    try:
        item = database.write_retry(
            lambda db: create_level3_question(
                db,
                current.actor,
                video_id=video_id,
                task=str(form.get("task") or ""),
                question=str(form.get("new_question") or ""),
                answers=[a for a in str(form.get("new_answers") or "").splitlines() if a.strip()],
                justification=str(form.get("new_justification") or ""),
                min_justification=settings.min_justification,
                bounds=settings.limits,
            )
        )
    except InvalidInput as error:
        if back.isdigit() and len(back) < 10:
            with database.read() as db:
                get_visible_item(db, current.actor, int(back))  # 404 for someone else's item
            data_kept = {**echo(form), "__form__": "author"}
            return refused(request, current, f"/items/{back}", data_kept, error)
        raise
    target = f"/items/{back}" if back.isdigit() else "/"
    notice = quote(f"new question {item.release_key} created and sent to two other annotators")
    return RedirectResponse(f"{target}?notice={notice}", status_code=303)


@router.post("/items/{item_id}/overlays", response_class=HTMLResponse)
def add_overlay_route(item_id: ItemId, request: Request, current: WriterDep, form: FormDep) -> Response:
    """The overlay tool of a `timed-mcq` page (its recipe's `ReviewHooks.add_overlay`): burn a
    spoken-but-not-visible value onto the released video."""
    database = database_of(request)

    try:
        start, end = float(str(form.get("start", ""))), float(str(form.get("end", "")))
    except ValueError:
        return RedirectResponse(f"/items/{item_id}?notice={quote('overlay: start and end are seconds')}", 303)
    try:
        with database.write() as db:
            item = get_visible_item(db, current.actor, item_id)
            hooks = hooks_for_task(item.task)
            if hooks is None:
                raise ValueError("overlays are for items whose review page offers them")
            hooks.add_overlay(
                db,
                current.actor,
                item,
                str(form.get("text", "")),
                start,
                end,
                str(form.get("position", "bottom")),
            )
    except ValueError as error:
        return RedirectResponse(f"/items/{item_id}?notice={quote('overlay: ' + str(error))}", status_code=303)
    return RedirectResponse(f"/items/{item_id}?notice={quote('overlay added')}", status_code=303)
