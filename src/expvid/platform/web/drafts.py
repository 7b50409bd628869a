"""POST-redirect-GET for refused forms: what was typed survives, and a reload never re-posts.

A refused save (422 or 409) used to re-render the page as the answer to the POST, so reloading it
posted again. Now the refusal stores the submitted fields and the problems as a draft bound to the
browser session and to the page, and redirects (303) to `page?draft=<token>`; that GET shows the
form as it was typed, with the problems, as often as it is reloaded. Drafts are deleted with the
session, when the same page is saved successfully, and after a day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from expvid.platform.db.models import FormDraft, utc_now
from expvid.platform.security.tokens import new_token
from expvid.platform.web.deps import Viewer, database_of

KEEP = timedelta(days=1)


@dataclass(frozen=True)
class Draft:
    data: dict[str, Any]
    problems: list[str]
    conflict: bool


def save_draft(
    db: Session,
    session_id: int,
    path: str,
    data: dict[str, Any],
    problems: list[str],
    *,
    conflict: bool = False,
) -> str:
    """Store a refused form for `path`; returns the token for the redirect."""
    now = utc_now()
    db.execute(delete(FormDraft).where(FormDraft.created_at < now - KEEP))
    token = new_token()
    db.add(
        FormDraft(
            token=token, session_id=session_id, path=path[:255], data=data, problems=problems,
            conflict=conflict, created_at=now,
        )
    )  # fmt: skip
    return token


def load_draft(db: Session, session_id: int, path: str, token: str | None) -> Draft | None:
    """The draft `token` names, if it belongs to this session and page and has not expired."""
    if not token or len(token) > 64:
        return None
    row = db.scalar(
        select(FormDraft).where(
            FormDraft.token == token, FormDraft.session_id == session_id, FormDraft.path == path[:255]
        )
    )
    if row is None or row.created_at < utc_now() - KEEP:
        return None
    return Draft(data=dict(row.data or {}), problems=list(row.problems or []), conflict=row.conflict)


def drop_drafts(db: Session, session_id: int, path: str) -> None:
    """Forget this session's drafts of `path` (after a successful save)."""
    db.execute(delete(FormDraft).where(FormDraft.session_id == session_id, FormDraft.path == path[:255]))


def refused(
    request: Request, current: Viewer, path: str, data: dict[str, Any], problems: list[str], *, conflict: bool
) -> Response:
    """Keep what was typed and send the browser back to `path` to show it (303: a reload never re-posts)."""
    with database_of(request).write() as db:
        token = save_draft(db, current.session.session_id, path, data, problems, conflict=conflict)
    return RedirectResponse(f"{path}?draft={token}", status_code=303)
