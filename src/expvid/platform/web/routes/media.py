"""Video files, served with HTTP Range support (206 Partial Content) so the browser can seek.

Only files an item or experiment of the user's refers to are served, resolved from the database
and checked to lie inside the import directory: a path never comes from the request.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response
from sqlalchemy import select

from expvid.platform.db.models import Experiment, ImportBatch, Item
from expvid.platform.services.access import can_view, get_visible_item
from expvid.platform.services.errors import NotFound
from expvid.platform.web.deps import ViewerDep, database_of
from expvid.platform.web.path_params import ItemId

router = APIRouter()
#: An id beyond PostgreSQL's `integer` names nothing (404), it is not a database error.


def _file(root: str, relative: str | None) -> Path:
    if not relative:
        raise NotFound("no such video")
    base = Path(root).resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        raise NotFound("video file not found")
    return path


def _respond(path: Path) -> FileResponse:
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    # Starlette's FileResponse answers Range requests with 206 and sets Accept-Ranges.
    return FileResponse(path, media_type=media_type, headers={"Cache-Control": "private, max-age=3600"})


@router.get("/media/items/{item_id}/{which}")
def item_video(item_id: ItemId, which: str, request: Request, current: ViewerDep) -> Response:
    with database_of(request).read() as db:
        item = get_visible_item(db, current.actor, item_id)
        batch = db.get(ImportBatch, item.batch_id)
        assert batch is not None
        if which == "clip":
            return _respond(_file(batch.root, item.video_path))
        if which == "source":
            return _respond(_file(batch.root, item.source_video))
        raise NotFound("no such video")


@router.get("/media/experiments/{video_id}/full")
def experiment_video(video_id: str, request: Request, current: ViewerDep) -> Response:
    with database_of(request).read() as db:
        experiment = db.scalar(select(Experiment).where(Experiment.video_id == video_id))
        if experiment is None:
            raise NotFound("no such experiment")
        items = db.scalars(select(Item).where(Item.experiment_id == experiment.id))
        if not any(can_view(db, current.actor, item) for item in items):
            raise NotFound("no such experiment")
        batch = db.get(ImportBatch, experiment.batch_id)
        assert batch is not None
        return _respond(_file(batch.root, experiment.full_video))
