"""Accounts: creation (CLI and admin), authentication, deactivation."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import User, utc_now
from expvid.platform.security.passwords import Passwords, PasswordTooShort
from expvid.platform.security.sessions import end_user_sessions
from expvid.platform.services import audit
from expvid.platform.services.errors import Actor, InvalidInput, NotFound

ROLES = ("annotator", "adjudicator", "admin")
_USERNAME = re.compile(r"^[A-Za-z0-9_.-]{2,64}$")


def clean_disciplines(values: Iterable[str]) -> list[str]:
    """Split comma-separated values, trim, drop empties and duplicates (case-insensitively)."""
    seen: dict[str, str] = {}
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if part and part.casefold() not in seen:
                seen[part.casefold()] = part
    return list(seen.values())


def add_user(
    db: Session,
    passwords: Passwords,
    *,
    username: str,
    password: str,
    role: str,
    disciplines: Iterable[str] = (),
    actor: Actor,
) -> User:
    problems = []
    if not _USERNAME.match(username):
        problems.append("user names have 2-64 characters: letters, digits, '.', '_' or '-'")
    if role not in ROLES:
        problems.append(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if db.scalar(select(User.id).where(User.username == username)) is not None:
        problems.append(f"user {username!r} already exists")
    try:
        password_hash = passwords.hash(password)
    except PasswordTooShort as exc:
        problems.append(str(exc))
    if problems:
        raise InvalidInput(problems)
    user = User(
        username=username,
        password_hash=password_hash,
        role=role,
        disciplines=clean_disciplines(disciplines),
        active=True,
        created_at=utc_now(),
    )
    db.add(user)
    db.flush()
    audit.record(
        db,
        actor,
        "user.created",
        entity="user",
        entity_id=user.id,
        after={"username": username, "role": role, "disciplines": user.disciplines},
    )
    return user


def authenticate(db: Session, passwords: Passwords, username: str, password: str) -> User | None:
    """The active user with these credentials, or None; upgrades the hash when its costs are outdated."""
    user = db.scalar(select(User).where(User.username == username))
    ok = passwords.verify(user.password_hash if user else None, password)
    if user is None or not ok or not user.active:
        return None
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash(password)
    return user


def set_active(db: Session, username: str, active: bool, *, actor: Actor) -> User:
    user = db.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFound(f"no user {username!r}")
    user.active = active
    if not active:
        end_user_sessions(db, user.id)
    audit.record(
        db, actor, "user.activated" if active else "user.deactivated", entity="user", entity_id=user.id
    )
    return user


def list_users(db: Session) -> list[User]:
    return list(db.scalars(select(User).order_by(User.role, User.username)))
