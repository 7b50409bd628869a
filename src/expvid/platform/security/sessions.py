"""Database-backed login sessions, each with its own CSRF token.

Why database-backed rather than a signed cookie: logging out (or deactivating a user) must end the
session on the server at once, and PostgreSQL deployments with several workers share the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from expvid.platform.db.models import User, WebSession, utc_now
from expvid.platform.security.tokens import digest, new_token

#: Refresh `last_seen_at` at most this often, so that reads do not turn into writes.
_TOUCH_INTERVAL = timedelta(minutes=5)


@dataclass(frozen=True)
class SessionInfo:
    """What a request needs to know about its session (detached from the ORM)."""

    session_id: int
    user_id: int
    username: str
    role: str
    disciplines: tuple[str, ...]
    csrf_token: str


def start_session(db: Session, user: User, *, hours: float) -> tuple[str, WebSession]:
    """Create a session for `user`; returns the cookie token (shown once) and the row."""
    token = new_token()
    now = utc_now()
    row = WebSession(
        token_hash=digest(token),
        user_id=user.id,
        csrf_token=new_token(),
        created_at=now,
        last_seen_at=now,
        expires_at=now + timedelta(hours=hours),
    )
    db.add(row)
    db.flush()
    return token, row


def lookup_session(db: Session, token: str | None, *, now: datetime | None = None) -> SessionInfo | None:
    """The live session for a cookie token, or None (unknown, expired, or user deactivated)."""
    if not token:
        return None
    now = now or utc_now()
    row = db.execute(
        select(WebSession, User)
        .join(User, User.id == WebSession.user_id)
        .where(WebSession.token_hash == digest(token))
    ).first()
    if row is None:
        return None
    web_session, user = row
    if web_session.expires_at <= now or not user.active:
        return None
    return SessionInfo(
        session_id=web_session.id,
        user_id=user.id,
        username=user.username,
        role=user.role,
        disciplines=tuple(user.disciplines or ()),
        csrf_token=web_session.csrf_token,
    )


def needs_touch(db: Session, session_id: int, *, now: datetime | None = None) -> bool:
    row = db.get(WebSession, session_id)
    return row is not None and (now or utc_now()) - row.last_seen_at > _TOUCH_INTERVAL


def touch_session(db: Session, session_id: int, *, hours: float) -> None:
    """Slide the expiry forward (idle timeout of `hours`)."""
    row = db.get(WebSession, session_id)
    if row is not None:
        now = utc_now()
        row.last_seen_at = now
        row.expires_at = now + timedelta(hours=hours)


def end_session(db: Session, token: str | None) -> None:
    if token:
        db.execute(delete(WebSession).where(WebSession.token_hash == digest(token)))


def end_user_sessions(db: Session, user_id: int) -> None:
    db.execute(delete(WebSession).where(WebSession.user_id == user_id))
