"""Admin actions: accounts (create, role and disciplines, password reset, deactivate, reassign
their open items) and their API tokens, assignment runs, adding an annotator to items that lack one,
reopening an item for correction."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from expvid.platform.db.models import Assignment, Item, User
from expvid.platform.security.api_tokens import list_tokens, revoke_user_tokens
from expvid.platform.services.assignment import add_annotator, assign_pending, short_items
from expvid.platform.services.errors import Conflict, InvalidInput, NotFound
from expvid.platform.services.limits import too_long
from expvid.platform.services.settlement import reopen_for_review
from expvid.platform.services.users import (
    ROLES,
    Reassignment,
    create_account,
    list_users,
    reassign_open_items,
    reset_password,
    set_active,
    update_user,
)
from expvid.platform.web.api_models import MAX_INT
from expvid.platform.web.deps import ViewerDep, WriterDep, database_of, hashes_of, settings_of
from expvid.platform.web.render import page

router = APIRouter(prefix="/admin")
ItemId = Annotated[int, Path(ge=1, le=MAX_INT)]
UserName = Annotated[str, Path(max_length=64)]


def _tokens_by_user(request: Request) -> dict[str, int]:
    with database_of(request).read() as db:
        counts: dict[str, int] = {}
        for token, username in list_tokens(db):
            if token.revoked_at is None:
                counts[username] = counts.get(username, 0) + 1
        return counts


def _open_assignments(request: Request) -> dict[int, int]:
    """Open assignments (on items still open for review) per user id."""
    with database_of(request).read() as db:
        return dict(
            db.execute(
                select(Assignment.user_id, func.count())
                .join(Item, Item.id == Assignment.item_id)
                .where(Assignment.completed_at.is_(None), Item.state.in_(("pending", "in_review")))
                .group_by(Assignment.user_id)
            ).all()
        )


def _users_page(request: Request, *, problems: list[str] | None = None, status_code: int = 200) -> Response:
    with database_of(request).read() as db:
        users = list_users(db)
    return page(
        request,
        "users.html",
        {"users": users, "roles": ROLES, "notice": request.query_params.get("notice"), "problems": problems or [],
         "tokens": _tokens_by_user(request), "open": _open_assignments(request),
         "min_password": settings_of(request).passwords.min_length},
        status_code,
    )  # fmt: skip


def _moved(result: Reassignment) -> str:
    if not result.released:
        return ""
    placed = result.assignment.assignments_created if result.assignment else 0
    return f": {len(result.released)} open item(s) returned to the pool, {placed} reassigned"


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, current: ViewerDep) -> Response:
    current.require("admin")
    return _users_page(request)


@router.post("/users", response_class=HTMLResponse)
async def create_user(request: Request, current: WriterDep) -> Response:
    current.require("admin")
    form = await request.form()

    def work() -> Response:
        try:
            create_account(
                database_of(request),
                hashes_of(request),
                username=str(form.get("username") or "").strip(),
                password=str(form.get("password") or ""),
                role=str(form.get("role") or ""),
                disciplines=[str(form.get("disciplines") or "")],
                actor=current.actor,
            )
        except InvalidInput as error:
            return _users_page(request, problems=error.problems, status_code=422)
        return RedirectResponse("/admin/users?notice=created", status_code=303)

    return await run_in_threadpool(work)


@router.post("/users/{username}/active")
async def toggle_user(username: UserName, request: Request, current: WriterDep) -> Response:
    """Activate or deactivate an account; deactivation hands its open items to other annotators."""
    current.require("admin")
    form = await request.form()
    active = form.get("active") == "1"

    def work() -> Reassignment:
        return database_of(request).write_retry(
            lambda db: set_active(db, username, active, actor=current.actor)
        )

    result = await run_in_threadpool(work)
    notice = quote(f"{username} {'activated' if active else 'deactivated'}{_moved(result)}")
    return RedirectResponse(f"/admin/users?notice={notice}", status_code=303)


@router.post("/users/{username}/reassign")
async def reassign_user(username: UserName, request: Request, current: WriterDep) -> Response:
    """Take back an annotator's open items (they stay active) and give them to other annotators."""
    current.require("admin")
    form = await request.form()
    reason = str(form.get("reason") or "").strip() or f"reassigned by {current.actor.name}"
    problems = too_long("the reason", reason, settings_of(request).limits.reason)
    if problems:
        raise InvalidInput(problems)

    def work() -> Reassignment:
        return database_of(request).write_retry(
            lambda db: reassign_open_items(db, current.actor, username, reason=reason)
        )

    result = await run_in_threadpool(work)
    notice = quote(f"{username}{_moved(result) or ': no open items to reassign'}")
    return RedirectResponse(f"/admin/users?notice={notice}", status_code=303)


@router.post("/users/{username}/edit")
async def edit_user(username: UserName, request: Request, current: WriterDep) -> Response:
    """Change an account's role and disciplines."""
    current.require("admin")
    form = await request.form()
    role = str(form.get("role") or "") or None
    disciplines = str(form.get("disciplines") or "")
    problems = too_long("the disciplines", disciplines, settings_of(request).limits.reason)
    if problems:
        raise InvalidInput(problems)

    def work() -> Response:
        try:
            result = database_of(request).write_retry(
                lambda db: update_user(db, current.actor, username, role=role, disciplines=[disciplines])
            )
        except InvalidInput as error:
            return _users_page(request, problems=error.problems, status_code=422)
        notice = quote(f"{username} updated{_moved(result)}")
        return RedirectResponse(f"/admin/users?notice={notice}", status_code=303)

    return await run_in_threadpool(work)


@router.post("/users/{username}/password")
async def reset_user_password(username: UserName, request: Request, current: WriterDep) -> Response:
    """Set a new password for someone who lost theirs (their sessions end)."""
    current.require("admin")
    form = await request.form()
    password = str(form.get("password") or "")
    keep_tokens = form.get("keep_tokens") == "1"  # revoking is the default

    def work() -> Response:
        try:
            revoked = reset_password(database_of(request), hashes_of(request), username=username, password=password,
                                     actor=current.actor, revoke_tokens=not keep_tokens)  # fmt: skip
        except InvalidInput as error:
            return _users_page(
                request, problems=[f"{username}: {p}" for p in error.problems], status_code=422
            )
        notice = quote(
            f"new password set for {username}; their sessions ended"
            + (f" and their {revoked} API token(s) were revoked" if revoked else "")
        )
        return RedirectResponse(f"/admin/users?notice={notice}", status_code=303)

    return await run_in_threadpool(work)


@router.post("/assign")
def run_assignment(request: Request, current: WriterDep) -> Response:
    current.require("admin")
    report = database_of(request).write_retry(lambda db: assign_pending(db, actor=current.actor))
    return RedirectResponse(f"/items?notice=assigned-{report.assignments_created}", status_code=303)


@router.post("/users/{username}/tokens/revoke")
async def revoke_tokens(username: UserName, request: Request, current: WriterDep) -> Response:
    """Revoke every API token of an account (a leaked script, someone leaving the team)."""
    current.require("admin")

    def work() -> int:
        with database_of(request).write() as db:
            user = db.scalar(select(User).where(User.username == username))
            if user is None:
                raise NotFound(f"no user {username!r}")
            return revoke_user_tokens(db, current.actor, user)

    revoked = await run_in_threadpool(work)
    notice = quote(f"revoked {revoked} token(s) of {username}")
    return RedirectResponse(f"/admin/users?notice={notice}", status_code=303)


@router.post("/items/{item_id}/annotators")
async def add_item_annotator(item_id: ItemId, request: Request, current: WriterDep) -> Response:
    """Give an item that lacks annotators to a chosen annotator."""
    current.require("admin")
    form = await request.form()
    username = str(form.get("username") or "").strip()

    def work() -> None:
        database_of(request).write_retry(lambda db: add_annotator(db, current.actor, item_id, username))

    await run_in_threadpool(work)
    return RedirectResponse(
        f"/items/{item_id}?notice={quote(username + ' added as an annotator')}", status_code=303
    )


@router.post("/short-items/annotators")
async def add_annotator_to_short_items(request: Request, current: WriterDep) -> Response:
    """Give every open item of a discipline that lacks annotators to one chosen annotator (dashboard)."""
    current.require("admin")
    form = await request.form()
    username = str(form.get("username") or "").strip()
    discipline = str(form.get("discipline") or "")

    def work() -> int:
        def change(db: Session) -> int:
            added = 0
            for item in short_items(db, limit=100_000):
                if item.discipline != discipline:
                    continue
                try:
                    add_annotator(db, current.actor, item.id, username)
                    added += 1
                except (InvalidInput, Conflict):
                    continue  # already on it, or wrote it: the item stays listed
            if not added:
                raise InvalidInput([f"{username or 'nobody'} could not be added to any {discipline} item"])
            return added

        return database_of(request).write_retry(change)

    added = await run_in_threadpool(work)
    notice = quote(f"{username} added as an annotator to {added} {discipline} item(s)")
    return RedirectResponse(f"/dashboard?notice={notice}", status_code=303)


@router.post("/items/{item_id}/reopen")
async def reopen(item_id: ItemId, request: Request, current: WriterDep) -> Response:
    """Send a settled item back to its annotators for correction (with a reason, audited)."""
    current.require("admin")
    form = await request.form()
    reason = str(form.get("reason") or "").strip()
    settings = settings_of(request)
    if len(reason) < settings.min_justification:
        raise InvalidInput(["reopening an item needs a reason"])
    problems = too_long("the reason", reason, settings.limits.reason)
    if problems:
        raise InvalidInput(problems)

    def work() -> None:
        def change(db: Session) -> None:
            item = db.get(Item, item_id)
            if item is None:
                raise NotFound(f"item {item_id} not found")
            reopen_for_review(db, current.actor, item, reason=reason)

        database_of(request).write_retry(change)

    await run_in_threadpool(work)
    return RedirectResponse(f"/items/{item_id}?notice=reopened", status_code=303)
