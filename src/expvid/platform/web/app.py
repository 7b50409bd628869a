"""The FastAPI application: routes, error pages, security headers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from expvid.asgi_headers import ResponseHeaders
from expvid.platform.config import PasswordPolicy, PlatformSettings
from expvid.platform.db.engine import Database
from expvid.platform.security.hashing import HashPool
from expvid.platform.security.passwords import Passwords
from expvid.platform.security.signin_gate import SignInGate
from expvid.platform.services.errors import Conflict, Forbidden, InvalidInput, NotFound, PlatformError
from expvid.platform.web.body_limit import BodyLimit, BodyTooLarge
from expvid.platform.web.busy_pacing import RefusalPacer
from expvid.platform.web.deps import CsrfRejected, Unauthenticated
from expvid.platform.web.input_guard import InputGuard
from expvid.platform.web.render import STATIC_DIR, page
from expvid.platform.web.routes import (
    account,
    adjudicate,
    admin,
    api,
    auth,
    dashboard,
    home,
    media,
    rereview,
    review,
)

#: uvicorn's own error logger: configured by `platform serve`, so operators see these lines.
_log = logging.getLogger("uvicorn.error")

#: No inline scripts or styles anywhere: the pages pass data to app.js through data- attributes.
_SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; media-src 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _error(
    request: Request, status: int, message: str, problems: list[str] | None = None, **extra: Any
) -> Response:
    if _wants_json(request):
        return JSONResponse({"detail": message, "problems": problems or [], **extra}, status_code=status)
    return page(
        request, "error.html", {"status": status, "message": message, "problems": problems or []}, status
    )


def create_app(settings: PlatformSettings, *, database: Database | None = None) -> FastAPI:
    """Build the web app. The database must already be migrated (`upgrade_to_head`)."""
    owns_database = database is None
    db = database or Database(settings.database_url)

    passwords = Passwords(settings.passwords)
    policy = settings.passwords
    hashes = HashPool(
        passwords,
        slots=policy.hash_slots,
        queue=policy.hash_queue,
        nice=policy.hash_nice,
        share=policy.hash_share,
    )
    gate = SignInGate(db, window_s=settings.throttle.window_seconds)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        summary = hashes.summary()
        if summary:
            _log.info("sign-in hashing: %s; database steps %s", summary, dict(gate.steps))
        hashes.close()
        gate.close()
        if owns_database:
            db.dispose()

    app = FastAPI(
        title="expvid verification platform",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.database = db
    app.state.passwords = passwords
    app.state.hashes = hashes
    app.state.signin_gate = gate
    app.state.refusal_pacer = RefusalPacer()
    # Outermost last: security headers on every answer, then the body cap, then the input guard
    # (which buffers bodies, so it must sit inside the cap).
    app.add_middleware(InputGuard)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(ResponseHeaders, headers=_SECURITY_HEADERS)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")
    for module in (auth, home, review, adjudicate, dashboard, media, admin, account, api, rereview):
        app.include_router(module.router)

    @app.exception_handler(BodyTooLarge)
    async def _too_large(request: Request, _exc: BodyTooLarge) -> Response:
        return _error(
            request,
            413,
            f"The request is larger than the {settings.max_body_bytes:,} bytes this server accepts.",
        )

    @app.exception_handler(Unauthenticated)
    async def _unauthenticated(request: Request, _exc: Unauthenticated) -> Response:
        if request.method == "GET" and not _wants_json(request):
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(target)}", status_code=303)
        return _error(request, 401, "Sign in first.")

    @app.exception_handler(CsrfRejected)
    async def _csrf(request: Request, _exc: CsrfRejected) -> Response:
        return _error(request, 403, "The request lacks a valid CSRF token; reload the page and try again.")

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound) -> Response:
        return _error(request, 404, str(exc) or "Not found.")

    @app.exception_handler(Forbidden)
    async def _forbidden(request: Request, exc: Forbidden) -> Response:
        return _error(request, 403, str(exc))

    @app.exception_handler(InvalidInput)
    async def _invalid(request: Request, exc: InvalidInput) -> Response:
        return _error(request, 422, "The submission was not saved.", exc.problems, code=exc.code)

    @app.exception_handler(Conflict)
    async def _conflict(request: Request, exc: Conflict) -> Response:
        return _error(request, 409, str(exc), current_version=exc.current_version)

    @app.exception_handler(PlatformError)
    async def _platform(request: Request, exc: PlatformError) -> Response:  # pragma: no cover - safety net
        return _error(request, 400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        # A malformed path (/items/abc, an id beyond any row) names nothing that exists: 404, as for
        # an id of someone else's item. Malformed query or body values are the caller's error: 422.
        errors = exc.errors()
        in_path = any(e.get("loc", ("",))[0] == "path" for e in errors)
        problems = [f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: {e.get('msg')}" for e in errors]
        return _error(request, 404 if in_path else 422, "Not found." if in_path else "Bad request.", problems)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        return _error(request, exc.status_code, str(exc.detail))

    return app


SECURE_COOKIES_ENV = "EXPVID_PLATFORM_SECURE_COOKIES"
PROXY_HEADER_ENV = "EXPVID_PLATFORM_PROXY_HEADER"
TRUSTED_PROXIES_ENV = "EXPVID_PLATFORM_TRUSTED_PROXIES"
HASH_SLOTS_ENV = "EXPVID_PLATFORM_HASH_SLOTS"
HASH_NICE_ENV = "EXPVID_PLATFORM_HASH_NICE"
HASH_SHARE_ENV = "EXPVID_PLATFORM_HASH_SHARE"


def settings_from_env() -> PlatformSettings:
    """Settings for worker processes: `EXPVID_PLATFORM_DB`, `EXPVID_PLATFORM_SECURE_COOKIES=1`,
    `EXPVID_PLATFORM_PROXY_HEADER`, `EXPVID_PLATFORM_TRUSTED_PROXIES` (comma-separated),
    `EXPVID_PLATFORM_HASH_SLOTS`, `EXPVID_PLATFORM_HASH_NICE` and `EXPVID_PLATFORM_HASH_SHARE`."""
    import os

    trusted = os.environ.get(TRUSTED_PROXIES_ENV)
    extra: dict[str, Any] = {}
    if trusted:
        extra["trusted_proxies"] = [part.strip() for part in trusted.split(",") if part.strip()]
    hashing: dict[str, float] = {}
    if os.environ.get(HASH_SHARE_ENV):
        hashing["hash_share"] = float(os.environ[HASH_SHARE_ENV])
    if os.environ.get(HASH_SLOTS_ENV):
        hashing["hash_slots"] = int(os.environ[HASH_SLOTS_ENV])
    if os.environ.get(HASH_NICE_ENV):
        hashing["hash_nice"] = int(os.environ[HASH_NICE_ENV])
    return PlatformSettings(
        secure_cookies=os.environ.get(SECURE_COOKIES_ENV) == "1",
        proxy_header=os.environ.get(PROXY_HEADER_ENV) or None,
        passwords=PasswordPolicy(**hashing),
        **extra,
    )


def app_from_env() -> FastAPI:
    """App factory for `uvicorn --factory` and multi-worker serving (see `settings_from_env`);
    the database must be migrated already."""
    return create_app(settings_from_env())
