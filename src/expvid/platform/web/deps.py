"""Request-level security: who is asking (session cookie or API token), and is this write genuine.

Every page and API call except the login page and static files needs a live session; every write
(POST) also needs the session's CSRF token, from the form field `csrf_token` or the `X-CSRF-Token`
header (API). On `/api/...` a personal token (`Authorization: Bearer evp_...`) may stand in for the
session; a browser never sends that header by itself, so such writes need no CSRF token. Role checks
happen in the services, which know what each role may do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData

from expvid.platform.config import PlatformSettings
from expvid.platform.db.engine import Database
from expvid.platform.security.api_tokens import lookup_token, touch_token
from expvid.platform.security.api_tokens import needs_touch as token_needs_touch
from expvid.platform.security.client import client_address
from expvid.platform.security.hashing import HashPool
from expvid.platform.security.passwords import Passwords
from expvid.platform.security.sessions import SessionInfo, lookup_session, needs_touch, touch_session
from expvid.platform.security.tokens import same
from expvid.platform.services.errors import Actor, Forbidden

SESSION_COOKIE = "expvid_session"
LOGIN_CSRF_COOKIE = "expvid_login_csrf"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"


class Unauthenticated(Exception):
    """No live session: pages redirect to the login form, API calls and writes get 401."""


class CsrfRejected(Exception):
    """A write without the session's CSRF token."""


@dataclass(frozen=True)
class Viewer:
    session: SessionInfo
    actor: Actor
    #: Signed in with an API token (JSON API only) rather than a browser session.
    via_token: bool = False
    read_only: bool = False

    @property
    def csrf_token(self) -> str:
        return self.session.csrf_token

    def require(self, *roles: str) -> None:
        if self.actor.role not in roles:
            raise Forbidden(f"this needs the role {' or '.join(roles)}")


def settings_of(request: Request) -> PlatformSettings:
    return request.app.state.settings


def database_of(request: Request) -> Database:
    return request.app.state.database


def passwords_of(request: Request) -> Passwords:
    return request.app.state.passwords


def hashes_of(request: Request) -> HashPool:
    """The app's bounded hashing pool: every argon2 hash a request needs runs there."""
    return request.app.state.hashes


def client_of(request: Request) -> str:
    """The client's address (a configured proxy header is trusted from trusted proxies only)."""
    settings = settings_of(request)
    header = settings.proxy_header
    return client_address(
        request.client.host if request.client else None,
        request.headers.get(header) if header else None,
        header=header,
        trusted_proxies=settings.trusted_proxies,
    )


def _bearer(request: Request) -> str | None:
    value = request.headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated()
    return token.strip()


def _token_viewer(request: Request, token: str) -> Viewer:
    database = database_of(request)
    with database.read() as db:
        info = lookup_token(db, token)
    if info is None:
        raise Unauthenticated()
    if token_needs_touch(info):
        with database.write() as db:
            touch_token(db, info.token_id)
    session = SessionInfo(
        session_id=0, user_id=info.user_id, username=info.username, role=info.role,
        disciplines=info.disciplines, csrf_token="",
    )  # fmt: skip
    actor = Actor(id=info.user_id, name=info.username, role=info.role, disciplines=info.disciplines)
    return Viewer(session=session, actor=actor, via_token=True, read_only=info.read_only)


def _session_for(request: Request) -> SessionInfo:
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise Unauthenticated()
    database = database_of(request)
    with database.read() as db:
        info = lookup_session(db, token)
        stale = info is not None and needs_touch(db, info.session_id)
    if info is None:
        raise Unauthenticated()
    if stale:
        with database.write() as db:
            touch_session(db, info.session_id, hours=settings_of(request).session_hours)
    return info


def viewer(request: Request) -> Viewer:
    """Dependency for reads: the signed-in user (an API token counts on `/api/...` only)."""
    if request.url.path.startswith("/api/"):
        token = _bearer(request)
        if token is not None:
            request.state.viewer = _token_viewer(request, token)
            return request.state.viewer
    info = _session_for(request)
    actor = Actor(id=info.user_id, name=info.username, role=info.role, disciplines=info.disciplines)
    request.state.viewer = Viewer(session=info, actor=actor)
    return request.state.viewer


async def writer(request: Request) -> Viewer:
    """Dependency for writes: the signed-in user, and a matching CSRF token."""
    current = await run_in_threadpool(viewer, request)  # the session lookup is blocking I/O
    if current.via_token:
        if current.read_only:
            raise Forbidden("this API token is read-only")
        return current
    token = request.headers.get(CSRF_HEADER)
    if token is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        form = await request.form()
        value = form.get(CSRF_FIELD)
        token = value if isinstance(value, str) else None
    if not same(token, current.csrf_token):
        raise CsrfRejected()
    return current


async def submitted_form(request: Request) -> FormData:
    """The submitted form, read once (the CSRF check in `writer` reads the same parsed form)."""
    return await request.form()


#: Route parameter types: `current: ViewerDep` for reads, `current: WriterDep` for writes, and
#: `form: FormDep` for a page's whole form. With the form read here, a handler can be a plain function
#: that FastAPI runs in its thread pool, away from the event loop (handlers do blocking I/O).
ViewerDep = Annotated[Viewer, Depends(viewer)]
WriterDep = Annotated[Viewer, Depends(writer)]
FormDep = Annotated[FormData, Depends(submitted_form)]
