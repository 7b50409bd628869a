"""Admin actions: accounts, assignment runs, reopening an item for correction."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from expvid.platform.db.models import Item
from expvid.platform.services.assignment import assign_pending
from expvid.platform.services.errors import InvalidInput, NotFound
from expvid.platform.services.settlement import reopen_for_review
from expvid.platform.services.users import ROLES, add_user, list_users, set_active
from expvid.platform.web.deps import ViewerDep, WriterDep, database_of, passwords_of, settings_of
from expvid.platform.web.render import page

router = APIRouter(prefix="/admin")


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, current: ViewerDep) -> Response:
    current.require("admin")
    with database_of(request).read() as db:
        users = list_users(db)
    return page(
        request, "users.html", {"users": users, "roles": ROLES, "notice": request.query_params.get("notice")}
    )


@router.post("/users", response_class=HTMLResponse)
async def create_user(request: Request, current: WriterDep) -> Response:
    current.require("admin")
    form = await request.form()

    def work() -> Response:
        try:
            with database_of(request).write() as db:
                add_user(
                    db,
                    passwords_of(request),
                    username=str(form.get("username") or "").strip(),
                    password=str(form.get("password") or ""),
                    role=str(form.get("role") or ""),
                    disciplines=[str(form.get("disciplines") or "")],
                    actor=current.actor,
                )
        except InvalidInput as error:
            with database_of(request).read() as db:
                users = list_users(db)
            return page(
                request, "users.html", {"users": users, "roles": ROLES, "problems": error.problems}, 422
            )
        return RedirectResponse("/admin/users?notice=created", status_code=303)

    return await run_in_threadpool(work)


@router.post("/users/{username}/active")
async def toggle_user(username: str, request: Request, current: WriterDep) -> Response:
    current.require("admin")
    form = await request.form()
    active = form.get("active") == "1"

    def work() -> None:
        with database_of(request).write() as db:
            set_active(db, username, active, actor=current.actor)

    await run_in_threadpool(work)
    return RedirectResponse("/admin/users?notice=updated", status_code=303)


@router.post("/assign")
def run_assignment(request: Request, current: WriterDep) -> Response:
    current.require("admin")
    report = database_of(request).write_retry(lambda db: assign_pending(db, actor=current.actor))
    return RedirectResponse(f"/items?notice=assigned-{report.assignments_created}", status_code=303)


@router.post("/items/{item_id}/reopen")
async def reopen(item_id: int, request: Request, current: WriterDep) -> Response:
    """Send a settled item back to its annotators for correction (with a reason, audited)."""
    current.require("admin")
    form = await request.form()
    reason = str(form.get("reason") or "").strip()
    if len(reason) < settings_of(request).min_justification:
        raise InvalidInput(["reopening an item needs a reason"])

    def work() -> None:
        def change(db: Session) -> None:
            item = db.get(Item, item_id)
            if item is None:
                raise NotFound(f"item {item_id} not found")
            reopen_for_review(db, current.actor, item, reason=reason)

        database_of(request).write_retry(change)

    await run_in_threadpool(work)
    return RedirectResponse(f"/items/{item_id}?notice=reopened", status_code=303)
