"""POST-redirect-GET for refused forms: what was typed survives, and a reload never re-posts.

A refused save (422 or 409) used to re-render the page as the answer to the POST, so reloading it
posted again. Now the refusal stores the submitted fields and the problems as a draft bound to the
browser session and to the page, and redirects (303) to `page?draft=<token>`; that GET shows the
form as it was typed, with the problems, as often as it is reloaded. Drafts are deleted with the
session, when the same page is saved successfully, and after a day.

Bounded: a refused form may be refused precisely because it is huge, and twenty refused posts of a
megabyte once stored twenty megabytes. A session keeps its `MAX_DRAFTS` newest drafts; a draft keeps
at most `MAX_FIELDS` fields, `MAX_VALUE` characters per value (twice the longest field limit, so
anything the server could accept is kept whole) and `MAX_TOTAL` characters in all, and says what it
cut among its problems.
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
from expvid.platform.services.errors import Conflict, InvalidInput
from expvid.platform.web.deps import Viewer, database_of

KEEP = timedelta(days=1)
MAX_DRAFTS = 5
MAX_FIELDS = 64
MAX_ROWS = 200
MAX_VALUE = 16_000
MAX_TOTAL = 128_000


def bounded(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`data` cut to the draft limits, and a note per field that was cut."""
    kept: dict[str, Any] = {}
    notes: list[str] = []
    budget = MAX_TOTAL

    def cut(name: str, value: Any) -> Any:
        nonlocal budget
        if not isinstance(value, str):
            return value if isinstance(value, int | float | bool) or value is None else str(value)[:100]
        allowed = max(0, min(MAX_VALUE, budget))
        budget -= min(len(value), allowed)
        if len(value) > allowed:
            notes.append(
                f"what was typed in {name[:64]!r} ({len(value):,} characters) is kept in this draft only up to "
                f"{allowed:,} characters"
            )
            return value[:allowed]
        return value

    for index, (name, value) in enumerate(data.items()):
        if index >= MAX_FIELDS:
            notes.append(f"this draft keeps the first {MAX_FIELDS} fields of the form")
            break
        if isinstance(value, list):
            rows = value[:MAX_ROWS]
            if len(value) > MAX_ROWS:
                notes.append(f"this draft keeps the first {MAX_ROWS} rows of {name[:64]!r}")
            kept[name[:64]] = [cut(name, v) for v in rows]
        else:
            kept[name[:64]] = cut(name, value)
    return kept, notes


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
    older = select(FormDraft.id).where(FormDraft.session_id == session_id).order_by(FormDraft.id.desc())
    db.execute(delete(FormDraft).where(FormDraft.id.in_(older.offset(MAX_DRAFTS - 1))))
    kept, notes = bounded(data)
    token = new_token()
    db.add(
        FormDraft(
            token=token, session_id=session_id, path=path[:255], data=kept,
            problems=[p[:2000] for p in problems[:50]] + notes, conflict=conflict, created_at=now,
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
    request: Request, current: Viewer, path: str, data: dict[str, Any], error: InvalidInput | Conflict
) -> Response:
    """Keep what was typed, with the service's refusal (its problems, or the conflicting change), and
    send the browser back to `path` to show it (303: a reload never re-posts)."""
    conflict = isinstance(error, Conflict)
    problems = [str(error)] if isinstance(error, Conflict) else error.problems
    with database_of(request).write() as db:
        token = save_draft(db, current.session.session_id, path, data, problems, conflict=conflict)
    return RedirectResponse(f"{path}?draft={token}", status_code=303)
