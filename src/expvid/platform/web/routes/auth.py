"""Login and logout.

The login form is itself CSRF-protected (a double-submit cookie: a random token in a cookie and in
the form must match), since there is no session yet to hold a token. Failed attempts slow down
further attempts from the same client (growing delays, `security/throttle.py`), never the account's
owner signing in from elsewhere. The password is checked outside any transaction on a bounded,
low-priority hashing pool (`services/signin.py`, `security/hashing.py`).
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from expvid.platform.security.hashing import HashingBusy
from expvid.platform.security.sessions import end_session
from expvid.platform.security.tokens import new_token, same
from expvid.platform.services.signin import sign_in
from expvid.platform.web.deps import (
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    Unauthenticated,
    WriterDep,
    client_of,
    database_of,
    hashes_of,
    settings_of,
    viewer,
)
from expvid.platform.web.render import page

router = APIRouter()
#: Retry-After of a sign-in refused because its hashing lane is full (answered after a pause).
BUSY_RETRY_S = 2


def _safe_next(target: str | None) -> str:
    """Only local paths: an open redirect after login would help phishing."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def _login_page(
    request: Request, *, error: str | None = None, status_code: int = 200, username: str = ""
) -> Response:
    token = new_token()
    response = page(
        request,
        "login.html",
        {
            "login_csrf": token,
            "error": error,
            "next": _safe_next(request.query_params.get("next")),
            "username": username,
        },
        status_code=status_code,
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", secure=settings_of(request).secure_cookies,
        path="/login",
    )  # fmt: skip
    return response


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> Response:
    """The form; answered on the event loop unless a session cookie needs looking up, so that a
    flood of strangers fetching it never queues in front of reviewers' work in the thread pool."""
    if request.cookies.get(SESSION_COOKIE):
        try:
            await run_in_threadpool(viewer, request)
            return RedirectResponse("/", status_code=303)
        except Unauthenticated:
            pass
    return _login_page(request)


@router.post("/login")
async def login(request: Request) -> Response:
    form = await request.form()
    username = str(form.get("username") or "").strip()
    password = str(form.get("password") or "")
    if not same(str(form.get("csrf_token") or ""), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return _login_page(request, error="The form expired; please sign in again.", status_code=403)
    settings = settings_of(request)
    try:
        result = await sign_in(
            database_of(request), hashes_of(request), settings.throttle, username=username,
            password=password, ip=client_of(request), session_hours=settings.session_hours,
            gate=request.app.state.signin_gate,
        )  # fmt: skip
    except HashingBusy:
        # Too many sign-ins wait for a hash already (a flood): answer later rather than at once,
        # spaced out (web/busy_pacing.py), so that a flood looping on refusals costs the server a
        # few requests a second whatever its size.
        await asyncio.sleep(request.app.state.refusal_pacer.delay())
        response = _login_page(
            request, error="Too many sign-ins at this moment; try again in a few seconds.",
            status_code=503, username=username,
        )  # fmt: skip
        response.headers["Retry-After"] = str(BUSY_RETRY_S)
        return response
    if result.outcome == "throttled":
        response = _login_page(
            request,
            error=f"Too many failed sign-ins from this computer; wait {result.retry_after_s} s and try again "
            "(each further failure doubles the wait).",
            status_code=429,
            username=username,
        )
        response.headers["Retry-After"] = str(result.retry_after_s)
        return response
    if result.outcome != "ok" or result.token is None:
        return _login_page(request, error="Wrong user name or password.", status_code=401, username=username)
    response = RedirectResponse(_safe_next(str(form.get("next") or "/")), status_code=303)
    response.set_cookie(
        SESSION_COOKIE, result.token, httponly=True, samesite="lax", secure=settings.secure_cookies,
        max_age=int(settings.session_hours * 3600),
    )  # fmt: skip
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


@router.post("/logout")
def logout(request: Request, current: WriterDep) -> Response:
    with database_of(request).write() as db:
        end_session(db, request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response
