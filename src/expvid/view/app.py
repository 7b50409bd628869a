"""The viewer's web app: GET only, read-only, confined to the runs and datasets it was given.

Nothing in a request is ever used as a file path: runs are named by their position ("r0"), items
by id (looked up in the loaded runs), frames by position in a prediction. The only files served
are the viewer's own static files (Starlette's StaticFiles, which refuses `..`) and the videos and
images the items refer to, checked to lie inside their dataset root.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from fastapi import FastAPI, Query
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from expvid.asgi_headers import ResponseHeaders
from expvid.schema import VideoRef
from expvid.view.detail import item_detail
from expvid.view.frames import confined
from expvid.view.render import STATIC_DIR, render_overview, render_page
from expvid.view.rows import rows_json
from expvid.view.session import RunView, ViewSession, dumps

#: Security headers on every response; no caching (the run may change under the page).
_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; media-src 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


def _json(value: Any, status: int = 200) -> Response:
    return Response(dumps(value), status_code=status, media_type="application/json")


def _not_found(what: str) -> Response:
    return JSONResponse({"detail": what}, status_code=404)


def create_app(session: ViewSession, *, allowed_hosts: list[str] | None = None) -> FastAPI:
    """The viewer app for `session`. `allowed_hosts` guards against DNS rebinding (default: loopback)."""
    app = FastAPI(title="expvid view", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")

    def find_run(key: str) -> RunView | None:
        try:
            return session.run(key)
        except KeyError:
            return None

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        session.refresh()
        with session.lock:
            return HTMLResponse(render_page(session, mode="served"))

    @app.get("/fragment/overview", response_class=HTMLResponse)
    def overview() -> HTMLResponse:
        session.refresh()
        with session.lock:
            return HTMLResponse(render_overview(session))

    @app.get("/api/version")
    def version() -> Response:
        return _json({"version": session.refresh()})

    @app.get("/api/items")
    def items() -> Response:
        session.refresh()
        with session.lock:
            text = rows_json(session)
        return Response(text, media_type="application/json")

    @app.get("/api/item")
    def item(id: str = Query(..., max_length=1000)) -> Response:
        session.refresh()
        with session.lock:
            if not session.has_item(id):
                return _not_found(f"no item {id!r} in these runs")

            def frames_ref(run: RunView, item_id: str, sample: int) -> dict[str, Any]:
                return {"url": f"api/frames?run={run.key}&sample={sample}&id={_quote(item_id)}"}

            def video_url(item_id: str) -> str | None:
                return f"video?id={_quote(item_id)}"

            return _json(item_detail(session, id, frames_ref, video_url))

    @app.get("/api/frames")
    def frames(run: str, id: str = Query(..., max_length=1000), sample: int = 0) -> Response:
        found = find_run(run)
        if found is None or not session.has_item(id):
            return _not_found("no such run or item")
        frame_set = session.frame_set(found, id, sample)
        if frame_set is None:
            return _json({"source": "unavailable", "note": "the item is not in the dataset", "frames": []})
        base = f"frame?run={run}&sample={sample}&id={_quote(id)}"
        return _json(
            {
                "source": frame_set.source,
                "note": frame_set.note,
                "mismatch": frame_set.mismatch,
                "recorded": [{"index": f.index, "time": f.time} for f in frame_set.recorded],
                "frames": [
                    {"index": f.index, "time": f.time, "label": f.label, "url": f"{base}&n={n}"}
                    for n, f in enumerate(frame_set.frames)
                ],
            }
        )

    @app.get("/frame")
    def frame(run: str, n: int, id: str = Query(..., max_length=1000), sample: int = 0) -> Response:
        found = find_run(run)
        if found is None or not session.has_item(id):
            return _not_found("no such run or item")
        frame_set = session.frame_set(found, id, sample)
        if frame_set is None or not 0 <= n < len(frame_set.frames):
            return _not_found("no such frame")
        image = frame_set.frames[n]
        return Response(image.data, media_type=image.mime)

    @app.get("/video")
    def video(id: str = Query(..., max_length=1000)) -> Response:
        with session.lock:
            item = session.item(id)
            root = session.dataset_root_for(id)
        if item is None or not isinstance(item.media, VideoRef):
            return _not_found("no video for this item")
        path = confined(root, item.media.path)
        if path is None or not path.is_file():
            return _not_found("video file not found inside the dataset")
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        # Starlette answers Range requests with 206 Partial Content, so the player can seek the window.
        return FileResponse(path, media_type=media_type)

    hosts = allowed_hosts or ["127.0.0.1", "localhost", "[::1]"]
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts)
    app.add_middleware(ResponseHeaders, headers=_HEADERS)
    return app


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
