"""Admin actions: accounts (create, role and disciplines, password reset, deactivate, reassign
their open items) and their API tokens, assignment runs, adding an annotator to items that lack one,
reopening an item for correction."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

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
from expvid.platform.web.deps import ViewerDep, WriterDep, database_of, hashes_of, settings_of
from expvid.platform.web.path_params import ItemId
from expvid.platform.web.render import page

router = APIRouter(prefix="/admin")
UserName = Annotated[str, Path(max_length=64)]
#: A text field of a submitted form ("" when absent). The handlers are plain functions: FastAPI reads
#: the form first and runs them in its thread pool, away from the event loop (they do blocking I/O).
FormText = Annotated[str, Form()]


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


def _with_notice(path: str, notice: str) -> Response:
    """Back to `path` after a write, with a line saying what it did."""
    return RedirectResponse(f"{path}?notice={quote(notice)}", status_code=303)


def _check_length(what: str, text: str, request: Request) -> None:
    problems = too_long(what, text, settings_of(request).limits.reason)
    if problems:
        raise InvalidInput(problems)


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
def create_user(
    request: Request,
    current: WriterDep,
    username: FormText = "",
    password: FormText = "",
    role: FormText = "",
    disciplines: FormText = "",
) -> Response:
    current.require("admin")
    try:
        create_account(
            database_of(request),
            hashes_of(request),
            username=username.strip(),
            password=password,
            role=role,
            disciplines=[disciplines],
            actor=current.actor,
        )
    except InvalidInput as error:
        return _users_page(request, problems=error.problems, status_code=422)
    return RedirectResponse("/admin/users?notice=created", status_code=303)


@router.post("/users/{username}/active")
def toggle_user(username: UserName, request: Request, current: WriterDep, active: FormText = "") -> Response:
    """Activate or deactivate an account; deactivation hands its open items to other annotators."""
    current.require("admin")
    activate = active == "1"
    result = database_of(request).write_retry(
        lambda db: set_active(db, username, activate, actor=current.actor)
    )
    return _with_notice(
        "/admin/users", f"{username} {'activated' if activate else 'deactivated'}{_moved(result)}"
    )


@router.post("/users/{username}/reassign")
def reassign_user(
    username: UserName, request: Request, current: WriterDep, reason: FormText = ""
) -> Response:
    """Take back an annotator's open items (they stay active) and give them to other annotators."""
    current.require("admin")
    reason = reason.strip() or f"reassigned by {current.actor.name}"
    _check_length("the reason", reason, request)
    result = database_of(request).write_retry(
        lambda db: reassign_open_items(db, current.actor, username, reason=reason)
    )
    return _with_notice("/admin/users", f"{username}{_moved(result) or ': no open items to reassign'}")


@router.post("/users/{username}/edit")
def edit_user(
    username: UserName, request: Request, current: WriterDep, role: FormText = "", disciplines: FormText = ""
) -> Response:
    """Change an account's role and disciplines."""
    current.require("admin")
    _check_length("the disciplines", disciplines, request)
    try:
        result = database_of(request).write_retry(
            lambda db: update_user(db, current.actor, username, role=role or None, disciplines=[disciplines])
        )
    except InvalidInput as error:
        return _users_page(request, problems=error.problems, status_code=422)
    return _with_notice("/admin/users", f"{username} updated{_moved(result)}")


@router.post("/users/{username}/password")
def reset_user_password(
    username: UserName,
    request: Request,
    current: WriterDep,
    password: FormText = "",
    keep_tokens: FormText = "",  # revoking is the default
) -> Response:
    """Set a new password for someone who lost theirs (their sessions end)."""
    current.require("admin")
    try:
        revoked = reset_password(database_of(request), hashes_of(request), username=username, password=password,
                                 actor=current.actor, revoke_tokens=keep_tokens != "1")  # fmt: skip
    except InvalidInput as error:
        return _users_page(request, problems=[f"{username}: {p}" for p in error.problems], status_code=422)
    return _with_notice(
        "/admin/users",
        f"new password set for {username}; their sessions ended"
        + (f" and their {revoked} API token(s) were revoked" if revoked else ""),
    )


@router.post("/assign")
def run_assignment(request: Request, current: WriterDep) -> Response:
    current.require("admin")
    report = database_of(request).write_retry(lambda db: assign_pending(db, actor=current.actor))
    return RedirectResponse(f"/items?notice=assigned-{report.assignments_created}", status_code=303)


@router.post("/users/{username}/tokens/revoke")
def revoke_tokens(username: UserName, request: Request, current: WriterDep) -> Response:
    """Revoke every API token of an account (a leaked script, someone leaving the team)."""
    current.require("admin")
    with database_of(request).write() as db:
        user = db.scalar(select(User).where(User.username == username))
        if user is None:
            raise NotFound(f"no user {username!r}")
        revoked = revoke_user_tokens(db, current.actor, user)
    return _with_notice("/admin/users", f"revoked {revoked} token(s) of {username}")


@router.post("/items/{item_id}/annotators")
def add_item_annotator(
    item_id: ItemId, request: Request, current: WriterDep, username: FormText = ""
) -> Response:
    """Give an item that lacks annotators to a chosen annotator."""
    current.require("admin")
    username = username.strip()
    database_of(request).write_retry(lambda db: add_annotator(db, current.actor, item_id, username))
    return _with_notice(f"/items/{item_id}", f"{username} added as an annotator")


@router.post("/short-items/annotators")
def add_annotator_to_short_items(
    request: Request, current: WriterDep, username: FormText = "", discipline: FormText = ""
) -> Response:
    """Give every open item of a discipline that lacks annotators to one chosen annotator (dashboard)."""
    current.require("admin")
    username = username.strip()

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

    added = database_of(request).write_retry(change)
    return _with_notice("/dashboard", f"{username} added as an annotator to {added} {discipline} item(s)")


@router.post("/items/{item_id}/reopen")
def reopen(item_id: ItemId, request: Request, current: WriterDep, reason: FormText = "") -> Response:
    """Send a settled item back to its annotators for correction (with a reason, audited)."""
    current.require("admin")
    reason = reason.strip()
    if len(reason) < settings_of(request).min_justification:
        raise InvalidInput(["reopening an item needs a reason"])
    _check_length("the reason", reason, request)

    def change(db: Session) -> None:
        item = db.get(Item, item_id)
        if item is None:
            raise NotFound(f"item {item_id} not found")
        reopen_for_review(db, current.actor, item, reason=reason)

    database_of(request).write_retry(change)
    return RedirectResponse(f"/items/{item_id}?notice=reopened", status_code=303)
