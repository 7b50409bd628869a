"""The signed-in user's own account: password change, API tokens (create, shown once; list; revoke)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from expvid.platform.db.models import User
from expvid.platform.security.api_tokens import create_token, list_tokens, revoke_token
from expvid.platform.services.errors import Forbidden, InvalidInput
from expvid.platform.services.users import change_password, live_token_count
from expvid.platform.web.deps import (
    FormDep,
    ViewerDep,
    WriterDep,
    client_of,
    database_of,
    hashes_of,
    settings_of,
)
from expvid.platform.web.path_params import TokenId
from expvid.platform.web.render import page

router = APIRouter(prefix="/account")


def _tokens_page(
    request: Request, current: ViewerDep, *, new_token: str | None = None, problems: list[str] | None = None,
    status_code: int = 200,
) -> Response:  # fmt: skip
    with database_of(request).read() as db:
        tokens = [t for t, _ in list_tokens(db, current.actor.id)]
    response = page(
        request,
        "tokens.html",
        {"tokens": tokens, "new_token": new_token, "problems": problems or [],
         "notice": request.query_params.get("notice")},
        status_code,
    )  # fmt: skip
    if new_token is not None:
        response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/tokens", response_class=HTMLResponse)
def tokens_page(request: Request, current: ViewerDep) -> Response:
    return _tokens_page(request, current)


@router.post("/tokens", response_class=HTMLResponse)
def new_token(request: Request, current: WriterDep, form: FormDep) -> Response:
    """Create a token and show it once (the page is not cached; only its digest is stored)."""
    name = str(form.get("name") or "")
    read_only = form.get("read_only") == "1"
    raw_days = str(form.get("expires_days") or "").strip()

    try:
        days = float(raw_days) if raw_days else None
    except ValueError:
        return _tokens_page(
            request, current, problems=["days until expiry must be a number"], status_code=422
        )
    try:
        with database_of(request).write() as db:
            user = db.scalar(select(User).where(User.id == current.actor.id))
            assert user is not None
            token, _ = create_token(
                db, current.actor, user, name=name, read_only=read_only, expires_days=days
            )
    except InvalidInput as error:
        return _tokens_page(request, current, problems=error.problems, status_code=422)
    return _tokens_page(request, current, new_token=token, status_code=201)


@router.post("/tokens/{token_id}/revoke")
def revoke(token_id: TokenId, request: Request, current: WriterDep) -> Response:
    with database_of(request).write() as db:
        revoke_token(db, current.actor, token_id)
    return RedirectResponse("/account/tokens?notice=revoked", status_code=303)


def _password_page(
    request: Request, current: ViewerDep, *, problems: list[str] | None = None, status_code: int = 200
) -> Response:  # fmt: skip
    with database_of(request).read() as db:
        tokens = live_token_count(db, current.actor.id)
    return page(
        request,
        "password.html",
        {"problems": problems or [], "notice": request.query_params.get("notice"),
         "min_password": settings_of(request).passwords.min_length, "live_tokens": tokens},
        status_code,
    )  # fmt: skip


@router.get("/password", response_class=HTMLResponse)
def password_page(request: Request, current: ViewerDep) -> Response:
    return _password_page(request, current)


@router.post("/password", response_class=HTMLResponse)
def change_own_password(request: Request, current: WriterDep, form: FormDep) -> Response:
    """Change one's own password (the current one is checked; other sessions end, this one stays)."""
    if current.via_token:
        raise Forbidden("a password is changed from a signed-in browser, not with an API token")
    fields = {name: str(form.get(name) or "") for name in ("current", "new", "confirm")}
    keep_tokens = form.get("keep_tokens") == "1"  # revoking is the default: a form without the box revokes

    try:
        revoked = change_password(
            database_of(request), hashes_of(request), settings_of(request).throttle, current.actor,
            current=fields["current"], new=fields["new"], confirm=fields["confirm"],
            session_id=current.session.session_id, ip=client_of(request), revoke_tokens=not keep_tokens,
        )  # fmt: skip
    except InvalidInput as error:
        return _password_page(request, current, problems=error.problems, status_code=422)
    notice = "password changed; your other browsers are signed out" + (
        f" and your {revoked} API token(s) revoked: make new ones for your scripts" if revoked else ""
    )
    return RedirectResponse(f"/account/password?notice={quote(notice)}", status_code=303)
