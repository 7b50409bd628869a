"""Login and logout.

The login form is itself CSRF-protected (a double-submit cookie: a random token in a cookie and in
the form must match), since there is no session yet to hold a token. Failed attempts slow down
further attempts from the same client (growing delays, `security/throttle.py`), never the account's
owner signing in from elsewhere.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from expvid.platform.security.sessions import end_session, start_session
from expvid.platform.security.throttle import check_throttle, record_attempt
from expvid.platform.security.tokens import new_token, same
from expvid.platform.services.users import authenticate
from expvid.platform.web.deps import (
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    Unauthenticated,
    WriterDep,
    client_of,
    database_of,
    passwords_of,
    settings_of,
    viewer,
)
from expvid.platform.web.render import page

router = APIRouter()
MAX_PASSWORD = 1024


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
def login_form(request: Request) -> Response:
    try:
        viewer(request)
        return RedirectResponse("/", status_code=303)
    except Unauthenticated:
        return _login_page(request)


@router.post("/login")
async def login(request: Request) -> Response:
    form = await request.form()
    username = str(form.get("username") or "").strip()
    password = str(form.get("password") or "")
    if not same(str(form.get("csrf_token") or ""), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return _login_page(request, error="The form expired; please sign in again.", status_code=403)
    ip = client_of(request)
    settings = settings_of(request)
    database = database_of(request)

    def attempt() -> tuple[str, str | None, int]:
        with database.write() as db:
            verdict = check_throttle(db, settings.throttle, username=username, ip=ip)
            if not verdict.allowed:
                return "throttled", None, verdict.retry_after_s
            # Hashing a megabyte "password" costs real time: such attempts fail without hashing.
            plausible = len(password) <= MAX_PASSWORD and len(username) <= 64
            user = authenticate(db, passwords_of(request), username, password) if plausible else None
            record_attempt(db, username=username, ip=ip, success=user is not None)
            if user is None:
                return "failed", None, 0
            token, _ = start_session(db, user, hours=settings.session_hours)
            return "ok", token, 0

    outcome, token, retry_after = await run_in_threadpool(attempt)
    if outcome == "throttled":
        response = _login_page(
            request,
            error=f"Too many failed sign-ins from this computer; wait {retry_after} s and try again "
            "(each further failure doubles the wait).",
            status_code=429,
            username=username,
        )
        response.headers["Retry-After"] = str(retry_after)
        return response
    if outcome == "failed" or token is None:
        return _login_page(request, error="Wrong user name or password.", status_code=401, username=username)
    response = RedirectResponse(_safe_next(str(form.get("next") or "/")), status_code=303)
    response.set_cookie(
        SESSION_COOKIE, token, httponly=True, samesite="lax", secure=settings.secure_cookies,
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
