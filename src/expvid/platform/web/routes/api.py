"""JSON API: the same operations as the pages, for scripts, the step editor's preview and load tests.

Authentication: a browser session (writes then need the `X-CSRF-Token` header, the session's token
from `GET /api/me`), or a personal API token, `Authorization: Bearer evp_...` (no CSRF token needed;
create one on the "API tokens" page or with `expvid platform token create`). A token acts with its
user's role; a read-only token cannot write. Bodies are validated field by field (422 names the
field); the request body as a whole is capped (413).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from expvid.platform.db.models import Item
from expvid.platform.security.api_tokens import list_tokens
from expvid.platform.services.access import get_visible_item
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.errors import InvalidInput, NotFound
from expvid.platform.services.reports import agreement_report, progress
from expvid.platform.services.review import own_decision, preview_step_edit, submit_decision, uses_step_editor
from expvid.platform.services.search import search_items
from expvid.platform.web.api_models import PreviewBody, ResolutionBody, parse_body
from expvid.platform.web.audit_views import audit_findings
from expvid.platform.web.deps import ViewerDep, WriterDep, database_of
from expvid.platform.web.forms import decision_from_json
from expvid.platform.web.item_filters import FiltersQuery, PageOffset
from expvid.platform.web.path_params import ItemId
from expvid.platform.web.routes.home import annotator_queue
from expvid.platform.web.submissions import write_submission
from expvid.platform.web.views import visible_history

router = APIRouter(prefix="/api")


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # the input guard refuses deep nesting first; kept as a backstop
        raise InvalidInput(["the request body must be JSON"]) from None
    if not isinstance(body, dict):
        raise InvalidInput(["the request body must be a JSON object"])
    return body


#: `body: JsonBody` is the request's JSON object; with it read here, the handlers are plain functions
#: that FastAPI runs in its thread pool (they do blocking database work).
JsonBody = Annotated[dict[str, Any], Depends(_json)]


def _item_json(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "key": item.release_key,
        "uid": item.key,
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
        "csrf_token": current.csrf_token or None,
        "via_token": current.via_token,
        "read_only": current.read_only,
    }


@router.get("/items")
def my_items(
    request: Request,
    current: ViewerDep,
    filters: FiltersQuery,
    offset: PageOffset = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 1000,
) -> dict[str, Any]:
    """An annotator's queue; for admins and adjudicators, items with the items page's filters."""
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
        if current.actor.role == "adjudicator":
            filters = replace(filters, state="conflict")
        items, total = search_items(db, filters, offset=offset, limit=limit)
        return {
            "total": total,
            "offset": offset,
            "items": [
                {
                    "id": i.id,
                    "key": i.release_key,
                    "uid": i.key,
                    "task": i.task,
                    "state": i.state,
                    "version": i.version,
                }
                for i in items
            ],
        }


@router.get("/items/{item_id}")
def item_detail(item_id: ItemId, request: Request, current: ViewerDep) -> dict[str, Any]:
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        decision = own_decision(db, current.actor, item.id)
        data = _item_json(item)
        data["audit_findings"] = audit_findings(db, item)
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
def api_decision(item_id: ItemId, request: Request, current: WriterDep, body: JsonBody) -> dict[str, Any]:
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        data = decision_from_json(item, body, step_editor=uses_step_editor(item))
    result = write_submission(request, submit_decision, current.actor, item_id, data)
    return {
        "decision_id": result.decision_id,
        "decision_version": result.decision_version,
        "item_state": result.item_state,
        "item_version": result.item_version,
    }


@router.post("/items/{item_id}/preview")
def api_preview(item_id: ItemId, request: Request, current: WriterDep, body: JsonBody) -> dict[str, Any]:
    """The question rebuilt from an edited step list, without saving anything (step editor preview).

    A 422 with `"code": "cannot_rebuild"` means the list is fine but this question cannot be made
    from it: the editor then offers to reject the question and keep the correction.
    """
    rows = [r.row() for r in parse_body(PreviewBody, body).steps]
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        if not uses_step_editor(item):
            raise NotFound("this item has no step list")
        return preview_step_edit(db, item, rows).as_dict()


@router.get("/items/{item_id}/history")
def api_history(item_id: ItemId, request: Request, current: ViewerDep) -> dict[str, Any]:
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
def api_adjudication(item_id: ItemId, request: Request, current: ViewerDep) -> dict[str, Any]:
    with database_of(request).read() as db:
        view = adjudication_view(db, current.actor, item_id)
        return {
            "item_version": view.item_version,
            "versions": [
                {
                    "label": v.label,
                    "content": v.content,
                    "steps": v.rows,
                    "derived": [
                        {"item": d.key, "task": d.task, "content": d.content, "problem": d.problem}
                        for d in v.derived
                    ],
                }
                for v in view.versions
            ],
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
def api_resolve(item_id: ItemId, request: Request, current: WriterDep, body: JsonBody) -> dict[str, Any]:
    given = parse_body(ResolutionBody, body)
    data = Resolution(
        outcome=given.outcome,
        justification=given.justification,
        item_version=given.item_version,
        content=given.content.content() if given.content is not None else None,
        rows=[r.row() for r in given.steps] if given.steps is not None else None,
    )
    item = write_submission(request, resolve, current.actor, item_id, data)
    return {"item_state": item.state, "item_version": item.version}


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


@router.get("/tokens")
def api_tokens(request: Request, current: ViewerDep) -> dict[str, Any]:
    """The caller's own API tokens (never the tokens themselves, which are not stored)."""
    with database_of(request).read() as db:
        rows = list_tokens(db, current.actor.id)
    return {
        "tokens": [
            {
                "id": t.id,
                "name": t.name,
                "prefix": t.prefix,
                "read_only": t.read_only,
                "created_at": t.created_at.isoformat(),
                "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None,
                "expires_at": t.expires_at.isoformat() if t.expires_at else None,
                "revoked": t.revoked_at is not None,
            }
            for t, _ in rows
        ]
    }
