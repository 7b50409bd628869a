"""JSON API: the same operations as the pages, for scripts, the step editor's preview and load tests.

Writes need the `X-CSRF-Token` header (the session's token, from `GET /api/me`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from expvid.platform.db.models import Item
from expvid.platform.services.access import get_visible_item
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.content import Content
from expvid.platform.services.errors import InvalidInput, NotFound
from expvid.platform.services.reports import agreement_report, progress
from expvid.platform.services.review import own_decision, preview_step_edit, submit_decision, uses_step_editor
from expvid.platform.web.deps import ViewerDep, WriterDep, database_of, settings_of
from expvid.platform.web.forms import decision_from_json, rows_from_json
from expvid.platform.web.routes.home import annotator_queue
from expvid.platform.web.views import visible_history

router = APIRouter(prefix="/api")


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise InvalidInput(["the request body must be JSON"]) from None
    if not isinstance(body, dict):
        raise InvalidInput(["the request body must be a JSON object"])
    return body


def _item_json(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "key": item.key,
        "task": item.task,
        "level": item.level,
        "discipline": item.discipline,
        "video_id": item.video_id,
        "question": item.question,
        "options": item.options,
        "answer": item.answer,
        "asr_caption": item.asr_caption,
        "flags": item.flags,
        "state": item.state,
        "version": item.version,
    }


@router.get("/me")
def me(current: ViewerDep) -> dict[str, Any]:
    return {
        "username": current.actor.name,
        "role": current.actor.role,
        "disciplines": list(current.actor.disciplines),
        "csrf_token": current.csrf_token,
    }


@router.get("/items")
def my_items(request: Request, current: ViewerDep) -> dict[str, Any]:
    with database_of(request).read() as db:
        if current.actor.role == "annotator":
            queue = annotator_queue(db, current)
            return {
                "items": [
                    {
                        "id": row.item.id,
                        "task": row.item.task,
                        "status": row.status,
                        "version": row.item.version,
                    }
                    for row in queue
                ]
            }
        current.require("admin", "adjudicator")
        query = select(Item).order_by(Item.id).limit(1000)
        if current.actor.role == "adjudicator":
            query = query.where(Item.state == "conflict")
        return {
            "items": [
                {"id": i.id, "task": i.task, "state": i.state, "version": i.version}
                for i in db.scalars(query)
            ]
        }


@router.get("/items/{item_id}")
def item_detail(item_id: int, request: Request, current: ViewerDep) -> dict[str, Any]:
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        decision = own_decision(db, current.actor, item.id)
        data = _item_json(item)
        data["my_decision"] = (
            None
            if decision is None
            else {
                "verdict": decision.verdict,
                "justification": decision.justification,
                "version": decision.version,
                "stale": decision.stale,
                "proposal": decision.proposal,
            }
        )
        return data


@router.post("/items/{item_id}/decision")
async def api_decision(item_id: int, request: Request, current: WriterDep) -> dict[str, Any]:
    body = await _json(request)
    database = database_of(request)
    settings = settings_of(request)

    def work() -> dict[str, Any]:
        with database.read() as db:
            item = get_visible_item(db, current.actor, item_id)
            data = decision_from_json(item, body, step_editor=uses_step_editor(item))
        result = database.write_retry(
            lambda db: submit_decision(
                db, current.actor, item_id, data, min_justification=settings.min_justification
            )
        )
        return {
            "decision_id": result.decision_id,
            "decision_version": result.decision_version,
            "item_state": result.item_state,
            "item_version": result.item_version,
        }

    return await run_in_threadpool(work)


@router.post("/items/{item_id}/preview")
async def api_preview(item_id: int, request: Request, current: WriterDep) -> dict[str, Any]:
    """The question rebuilt from an edited step list, without saving anything (step editor preview)."""
    body = await _json(request)
    database = database_of(request)

    def work() -> dict[str, Any]:
        with database.read() as db:
            item = get_visible_item(db, current.actor, item_id)
            if not uses_step_editor(item):
                raise NotFound("this item has no step list")
            content: Content = preview_step_edit(db, item, rows_from_json(body.get("steps")))
            return content.as_dict()

    return await run_in_threadpool(work)


@router.get("/items/{item_id}/history")
def api_history(item_id: int, request: Request, current: ViewerDep) -> dict[str, Any]:
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        return {
            "events": [
                {
                    "at": e.at.isoformat(),
                    "actor": e.actor_name,
                    "action": e.action,
                    "before": e.before,
                    "after": e.after,
                    "reason": e.reason,
                }
                for e in visible_history(db, current.actor, item)
            ]
        }


@router.get("/adjudications/{item_id}")
def api_adjudication(item_id: int, request: Request, current: ViewerDep) -> dict[str, Any]:
    with database_of(request).read() as db:
        view = adjudication_view(db, current.actor, item_id)
        return {
            "item_version": view.item_version,
            "versions": [{"label": v.label, "content": v.content, "steps": v.rows} for v in view.versions],
            "judgements": [
                {
                    "label": j.label,
                    "stance": j.stance,
                    "version": j.version_label,
                    "justification": j.justification,
                }
                for j in view.judgements
            ],
        }


@router.post("/adjudications/{item_id}")
async def api_resolve(item_id: int, request: Request, current: WriterDep) -> dict[str, Any]:
    body = await _json(request)
    database = database_of(request)
    settings = settings_of(request)
    raw_content = body.get("content")
    data = Resolution(
        outcome=str(body.get("outcome")),
        justification=str(body.get("justification") or ""),
        item_version=int(body.get("item_version") or 0),
        content=Content.from_dict(raw_content) if isinstance(raw_content, dict) else None,
        rows=rows_from_json(body["steps"]) if body.get("steps") is not None else None,
    )

    def work() -> dict[str, Any]:
        item = database.write_retry(
            lambda db: resolve(db, current.actor, item_id, data, min_justification=settings.min_justification)
        )
        return {"item_state": item.state, "item_version": item.version}

    return await run_in_threadpool(work)


@router.get("/progress")
def api_progress(request: Request, current: ViewerDep) -> dict[str, Any]:
    current.require("admin", "adjudicator")
    with database_of(request).read() as db:
        report = progress(db)
    return {
        "totals": report.totals,
        "items_left": report.items_left,
        "by_group": report.by_group,
        "annotators": [vars(a) for a in report.annotators],
        "median_minutes_by_level": report.median_minutes_by_level,
    }


@router.get("/agreement")
def api_agreement(request: Request, current: ViewerDep) -> dict[str, Any]:
    current.require("admin", "adjudicator")
    with database_of(request).read() as db:
        return agreement_report(db).as_dict()
