"""Personal API tokens for scripts: `Authorization: Bearer evp_...` on the JSON API.

Why tokens at all: the JSON API otherwise needs a browser session and its CSRF token. A bearer token
is not sent by a browser on its own, so requests carrying one need no CSRF token; for the same reason
tokens are accepted on `/api/...` only, never by the HTML forms.

Only a SHA-256 of each token is stored (the token is shown once, when created). A token acts with
its user's *current* role, so demoting or deactivating someone also narrows or ends their tokens;
a read-only token may only read. Tokens can expire and be revoked; `last_used_at` is refreshed at
most every few minutes so that reads do not turn into writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from expvid.platform.db.models import ApiToken, User, utc_now
from expvid.platform.security.tokens import digest, new_token
from expvid.platform.services import audit
from expvid.platform.services.errors import Actor, Forbidden, InvalidInput, NotFound

TOKEN_PREFIX = "evp_"
_TOUCH_INTERVAL = timedelta(minutes=5)
MAX_ACTIVE_TOKENS = 20


@dataclass(frozen=True)
class TokenInfo:
    token_id: int
    user_id: int
    username: str
    role: str
    disciplines: tuple[str, ...]
    read_only: bool
    last_used_at: datetime | None


def create_token(
    db: Session,
    actor: Actor,
    user: User,
    *,
    name: str,
    read_only: bool = False,
    expires_days: float | None = None,
    max_name: int = 64,
) -> tuple[str, ApiToken]:
    """A new token for `user` (created by the user, or by an admin); returns it (shown once) and its row."""
    if actor.id != user.id and actor.role != "admin":
        raise Forbidden("only admins create tokens for other users")
    name = name.strip()
    problems = []
    if not name:
        problems.append("give the token a name (what script uses it)")
    if len(name) > max_name:
        problems.append(f"the token name has {len(name)} characters; at most {max_name} are allowed")
    if expires_days is not None and not 0 < expires_days <= 3650:
        problems.append("a token expires after 1 to 3650 days (or never)")
    active = db.scalars(
        select(ApiToken.id).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
    ).all()
    if len(active) >= MAX_ACTIVE_TOKENS:
        problems.append(f"{user.username} already has {MAX_ACTIVE_TOKENS} tokens; revoke one first")
    if problems:
        raise InvalidInput(problems)
    token = TOKEN_PREFIX + new_token()
    now = utc_now()
    row = ApiToken(
        user_id=user.id,
        name=name,
        token_hash=digest(token),
        prefix=token[: len(TOKEN_PREFIX) + 6],
        read_only=read_only,
        created_at=now,
        expires_at=now + timedelta(days=expires_days) if expires_days else None,
    )
    db.add(row)
    db.flush()
    audit.record(
        db, actor, "token.created", entity="api_token", entity_id=row.id,
        after={"user": user.username, "name": name, "prefix": row.prefix, "read_only": read_only,
               "expires_at": row.expires_at.isoformat() if row.expires_at else None},
    )  # fmt: skip
    return token, row


def lookup_token(db: Session, token: str | None, *, now: datetime | None = None) -> TokenInfo | None:
    """The live token for a bearer value, or None (unknown, revoked, expired, user deactivated)."""
    if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    now = now or utc_now()
    row = db.execute(
        select(ApiToken, User)
        .join(User, User.id == ApiToken.user_id)
        .where(ApiToken.token_hash == digest(token))
    ).first()
    if row is None:
        return None
    api_token, user = row
    if api_token.revoked_at is not None or not user.active:
        return None
    if api_token.expires_at is not None and api_token.expires_at <= now:
        return None
    return TokenInfo(
        token_id=api_token.id,
        user_id=user.id,
        username=user.username,
        role=user.role,
        disciplines=tuple(user.disciplines or ()),
        read_only=api_token.read_only,
        last_used_at=api_token.last_used_at,
    )


def needs_touch(info: TokenInfo, *, now: datetime | None = None) -> bool:
    return info.last_used_at is None or (now or utc_now()) - info.last_used_at > _TOUCH_INTERVAL


def touch_token(db: Session, token_id: int) -> None:
    db.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=utc_now()))


def list_tokens(db: Session, user_id: int | None = None) -> list[tuple[ApiToken, str]]:
    """Tokens with their owner's name, newest first (one user's, or everyone's for admins)."""
    query = select(ApiToken, User.username).join(User, User.id == ApiToken.user_id)
    if user_id is not None:
        query = query.where(ApiToken.user_id == user_id)
    return [(t, name) for t, name in db.execute(query.order_by(ApiToken.id.desc()))]


def revoke_token(db: Session, actor: Actor, token_id: int) -> ApiToken:
    """Revoke one token (its owner or an admin); revoking twice is harmless."""
    row = db.get(ApiToken, token_id)
    if row is None or (row.user_id != actor.id and actor.role != "admin"):
        raise NotFound(f"token {token_id} not found")
    if row.revoked_at is None:
        row.revoked_at = utc_now()
        audit.record(
            db, actor, "token.revoked", entity="api_token", entity_id=row.id,
            after={"prefix": row.prefix, "name": row.name},
        )  # fmt: skip
    return row


def revoke_user_tokens(db: Session, actor: Actor, user: User) -> int:
    """Revoke every live token of `user` (admin); returns how many."""
    rows = list(
        db.scalars(select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None)))
    )
    for row in rows:
        revoke_token(db, actor, row.id)
    return len(rows)
