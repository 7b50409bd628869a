"""Accounts: creation, role and discipline edits, passwords, deactivation, reassignment.

Functions taking a `Session` run inside the caller's write transaction. Those that set a password
(`create_account`, `reset_password`, `change_password`) take the `Database` instead: they hash on the
bounded pool (security/hashing.py) first and open their short transaction afterwards, so no
transaction is ever open while argon2 runs.

Taking someone off the work never strands it: deactivating an annotator, giving them another role,
or an admin's "reassign" releases their open assignments (services/assignment.py) and runs an
assignment so the items go to other eligible annotators at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.models import User, WebSession, utc_now
from expvid.platform.security.api_tokens import list_tokens, revoke_user_tokens
from expvid.platform.security.hashing import HashPool
from expvid.platform.security.passwords import Passwords, PasswordTooShort
from expvid.platform.security.sessions import end_user_sessions
from expvid.platform.security.throttle import mark_success, reserve_attempt
from expvid.platform.services import audit
from expvid.platform.services.assignment import AssignmentReport, assign_pending, release_assignments
from expvid.platform.services.errors import Actor, Forbidden, InvalidInput, NotFound

ROLES = ("annotator", "adjudicator", "admin")
_USERNAME = re.compile(r"^[A-Za-z0-9_.-]{2,64}$")
MAX_PASSWORD = 1024


def clean_disciplines(values: Iterable[str]) -> list[str]:
    """Split comma-separated values, trim, drop empties and duplicates (case-insensitively)."""
    seen: dict[str, str] = {}
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if part and part.casefold() not in seen:
                seen[part.casefold()] = part[:128]
    return list(seen.values())


def password_problems(passwords: Passwords, password: str) -> list[str]:
    if len(password) < passwords.policy.min_length:
        return [f"password must have at least {passwords.policy.min_length} characters"]
    if len(password) > MAX_PASSWORD:
        return [f"password must have at most {MAX_PASSWORD} characters"]
    return []


def _user(db: Session, username: str, *, lock: bool = False) -> User:
    query = select(User).where(User.username == username)
    user = db.scalar(query.with_for_update() if lock else query)
    if user is None:
        raise NotFound(f"no user {username!r}")
    return user


def add_user(
    db: Session,
    passwords: Passwords,
    *,
    username: str,
    password: str,
    role: str,
    disciplines: Iterable[str] = (),
    actor: Actor,
    password_hash: str | None = None,
) -> User:
    """Create an account. Pass `password_hash` (hashed before the transaction) to keep argon2 out of
    it; without one the password is hashed here (scripts, tests)."""
    problems = []
    if not _USERNAME.match(username):
        problems.append("user names have 2-64 characters: letters, digits, '.', '_' or '-'")
    if role not in ROLES:
        problems.append(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if db.scalar(select(User.id).where(User.username == username)) is not None:
        problems.append(f"user {username!r} already exists")
    problems += password_problems(passwords, password) if password_hash is None else []
    if problems:
        raise InvalidInput(problems)
    if password_hash is None:
        try:
            password_hash = passwords.hash(password)
        except PasswordTooShort as exc:  # pragma: no cover - checked above
            raise InvalidInput([str(exc)]) from None
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


def create_account(
    database: Database, pool: HashPool, *, username: str, password: str, role: str,
    disciplines: Iterable[str] = (), actor: Actor,
) -> User:  # fmt: skip
    """`add_user` with the password hashed before the write transaction."""
    problems = password_problems(pool.passwords, password)
    if problems:
        raise InvalidInput(problems)
    password_hash = pool.hash_blocking(password)
    with database.write() as db:
        return add_user(
            db, pool.passwords, username=username, password=password, role=role, disciplines=disciplines,
            actor=actor, password_hash=password_hash,
        )  # fmt: skip


def authenticate(db: Session, passwords: Passwords, username: str, password: str) -> User | None:
    """The active user with these credentials, or None (for scripts and tests: the web sign-in is
    `services/signin.py`, which hashes outside any transaction)."""
    user = db.scalar(select(User).where(User.username == username))
    ok = passwords.verify(user.password_hash if user else None, password)
    if user is None or not ok or not user.active:
        return None
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash(password)
    return user


def _other_active_admins(db: Session, user: User) -> int:
    return int(
        db.scalar(select(func.count()).where(User.role == "admin", User.active.is_(True), User.id != user.id))
        or 0
    )


@dataclass
class Reassignment:
    """Open assignments taken back from someone, and where they went."""

    username: str
    released: list[int]
    assignment: AssignmentReport | None


def reassign_open_items(db: Session, actor: Actor, username: str, *, reason: str) -> Reassignment:
    """Give `username`'s open items to other eligible annotators (they keep what they decided)."""
    if not actor.is_admin:
        raise Forbidden("only admins reassign work")
    user = _user(db, username, lock=True)
    released = release_assignments(db, actor, user.id, reason=reason)
    report = assign_pending(db, actor=actor) if released else None
    return Reassignment(username, released, report)


def set_active(db: Session, username: str, active: bool, *, actor: Actor) -> Reassignment:
    """Activate or deactivate an account. Deactivation ends its sessions and returns its open
    assignments to the pool (its decisions stay)."""
    user = _user(db, username, lock=True)
    if not active and user.role == "admin" and user.active and _other_active_admins(db, user) == 0:
        raise InvalidInput(["this is the last active admin; make someone else an admin first"])
    before = user.active
    user.active = active
    if not active:
        end_user_sessions(db, user.id)
    if before != active:
        audit.record(
            db, actor, "user.activated" if active else "user.deactivated", entity="user", entity_id=user.id
        )
    if active:
        return Reassignment(username, [], None)
    released = release_assignments(db, actor, user.id, reason=f"{username} was deactivated")
    return Reassignment(username, released, assign_pending(db, actor=actor) if released else None)


def update_user(
    db: Session, actor: Actor, username: str, *, role: str | None = None, disciplines: list[str] | None = None
) -> Reassignment:
    """Change an account's role and/or disciplines (admins). Someone who stops being an annotator
    gives their open items back; a discipline change keeps the items already assigned (reassign to
    hand them over)."""
    if not actor.is_admin:
        raise Forbidden("only admins edit accounts")
    user = _user(db, username, lock=True)
    if role is not None and role not in ROLES:
        raise InvalidInput([f"role must be one of {', '.join(ROLES)}, got {role!r}"])
    if (
        role is not None
        and role != "admin"
        and user.role == "admin"
        and user.active
        and _other_active_admins(db, user) == 0
    ):
        raise InvalidInput(["this is the last active admin; make someone else an admin first"])
    before = {"role": user.role, "disciplines": list(user.disciplines or [])}
    if role is not None:
        user.role = role
    if disciplines is not None:
        user.disciplines = clean_disciplines(disciplines)
    after = {"role": user.role, "disciplines": list(user.disciplines or [])}
    if after == before:
        return Reassignment(username, [], None)
    audit.record(db, actor, "user.updated", entity="user", entity_id=user.id, before=before, after=after)
    if before["role"] == "annotator" and user.role != "annotator":
        released = release_assignments(db, actor, user.id, reason=f"{username} is now {user.role}")
        return Reassignment(username, released, assign_pending(db, actor=actor) if released else None)
    return Reassignment(username, [], None)


def _store_password(
    database: Database,
    username: str,
    password_hash: str,
    actor: Actor,
    *,
    action: str,
    keep_session: int | None,
    revoke_tokens: bool,
) -> int:
    """Store the new hash and close the doors the old password opened; returns tokens revoked."""
    with database.write() as db:
        user = _user(db, username, lock=True)
        user.password_hash = password_hash
        sessions = delete(WebSession).where(WebSession.user_id == user.id)
        if keep_session is not None:
            sessions = sessions.where(WebSession.id != keep_session)
        db.execute(sessions)  # whoever knew the old password is signed out
        # ...and whoever made an API token with it: a reset after a compromise must close every door.
        revoked = revoke_user_tokens(db, actor, user) if revoke_tokens else 0
        audit.record(db, actor, action, entity="user", entity_id=user.id,
                     after={"tokens_revoked": revoked, "tokens_kept": not revoke_tokens})  # fmt: skip
        return revoked


def live_token_count(db: Session, user_id: int | None) -> int:
    """Live API tokens of a user (shown beside the password forms, which revoke them)."""
    return len([t for t, _ in list_tokens(db, user_id) if t.revoked_at is None]) if user_id is not None else 0


def reset_password(
    database: Database,
    pool: HashPool,
    *,
    username: str,
    password: str,
    actor: Actor,
    revoke_tokens: bool = True,
) -> int:
    """An admin (or the CLI) sets a new password; every session of the account ends and, unless
    `revoke_tokens=False`, every API token it has is revoked. Returns the tokens revoked."""
    if not actor.is_admin:
        raise Forbidden("only admins reset passwords")
    problems = password_problems(pool.passwords, password)
    if problems:
        raise InvalidInput(problems)
    with database.read() as db:
        _user(db, username)
    return _store_password(database, username, pool.hash_blocking(password), actor, action="user.password_reset",
                           keep_session=None, revoke_tokens=revoke_tokens)  # fmt: skip


def change_password(
    database: Database, pool: HashPool, throttle: ThrottlePolicy, actor: Actor, *, current: str, new: str,
    confirm: str, session_id: int, ip: str, revoke_tokens: bool = True,
) -> int:  # fmt: skip
    """The signed-in user changes their own password (the current one is checked, under the same
    throttle as signing in, so a borrowed session cannot guess it); their other sessions end, this
    one stays, and their API tokens are revoked unless `revoke_tokens=False`. Returns the tokens
    revoked."""
    problems = password_problems(pool.passwords, new)
    if new != confirm:
        problems.append("the new password and its confirmation differ")
    if new == current:
        problems.append("the new password is the current one")
    if problems:
        raise InvalidInput(problems)
    with database.write() as db:
        user = db.get(User, actor.id) if actor.id is not None else None
        if user is None or not user.active:
            raise NotFound("no such account")
        stored, username = user.password_hash, user.username
        verdict, attempt_id, _ = reserve_attempt(db, throttle, username=username, ip=ip)
    if attempt_id is None:
        raise InvalidInput(
            [f"too many wrong current passwords from this computer; wait {verdict.retry_after_s} s"]
        )
    if len(current) > MAX_PASSWORD or not pool.verify_blocking(stored, current):
        raise InvalidInput(["the current password is not right"])
    with database.write() as db:
        mark_success(db, attempt_id)
    return _store_password(database, username, pool.hash_blocking(new), actor, action="user.password_changed",
                           keep_session=session_id, revoke_tokens=revoke_tokens)  # fmt: skip


def list_users(db: Session) -> list[User]:
    return list(db.scalars(select(User).order_by(User.role, User.username)))
