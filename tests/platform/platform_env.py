"""Shared helpers of the platform tests (a module of its own, so that test files never import
`conftest`, whose module name other test areas share)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from expvid.platform import PlatformSettings
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Decision, Item, User
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.content import Content
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.review import DecisionInput, DecisionResult, submit_decision
from expvid.platform.services.users import add_user
from expvid.platform.testing import LiveServer

__all__ = [
    "EDITED_TOOLS",
    "FAST_PASSWORDS",
    "USERS",
    "Env",
    "LiveServer",
    "add_users",
    "decide",
    "password_of",
]

#: Cheap argon2 parameters for tests (the production defaults cost ~50 ms per hash on 2 cores).
FAST_PASSWORDS = PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)
USERS = {
    "alice": ("annotator", ["Biology"]),
    "bob": ("annotator", ["Biology"]),
    "dave": ("annotator", ["Chemistry"]),
    "carol": ("adjudicator", []),
    "root": ("admin", []),
}


def password_of(username: str) -> str:
    return f"pw-{username}-secret"


@dataclass
class Env:
    """A migrated database with the five test users and the candidate directory imported."""

    url: str
    database: Database
    settings: PlatformSettings
    candidates: Path
    users: dict[str, int] = field(default_factory=dict)

    def actor(self, username: str) -> Actor:
        with self.database.read() as db:
            user = db.scalar(select(User).where(User.username == username))
        assert user is not None, username
        return Actor(id=user.id, name=username, role=user.role, disciplines=tuple(user.disciplines or []))

    def item_id(self, key: str) -> int:
        with self.database.read() as db:
            found = db.scalar(select(Item.id).where(Item.release_key == key))
        assert found is not None, key
        return int(found)

    def item(self, key: str) -> Item:
        with self.database.read() as db:
            found = db.scalar(select(Item).where(Item.release_key == key))
        assert found is not None, key
        return found


def add_users(database: Database, names: dict[str, tuple[str, list[str]]]) -> dict[str, int]:
    passwords = Passwords(FAST_PASSWORDS)
    ids = {}
    with database.write() as db:
        for name, (role, disciplines) in names.items():
            user = add_user(
                db, passwords, username=name, password=password_of(name), role=role,
                disciplines=disciplines, actor=SYSTEM,
            )  # fmt: skip
            ids[name] = user.id
    return ids


EDITED_TOOLS = Content(
    "What laboratory tool is being used in this research step?",
    {"A": "Centrifuge", "B": "Erlenmeyer flask", "C": "Glass-bottom Petri dish", "D": "Test tube"},
    "C",
)


def decide(env: Env, user: str, key: str, verdict: str, **kwargs: object) -> DecisionResult:
    item = env.item(key)
    with env.database.read() as db:
        mine = db.scalar(
            select(Decision).where(Decision.item_id == item.id, Decision.user_id == env.users[user])
        )
    data = DecisionInput(
        verdict=verdict,
        justification=str(kwargs.pop("justification", f"{user} checked {key} against the clip")),
        item_version=int(kwargs.pop("item_version", item.version)),  # type: ignore[call-overload]
        decision_version=int(kwargs.pop("decision_version", mine.version if mine else 0)),  # type: ignore[call-overload]
        **kwargs,  # type: ignore[arg-type]
    )
    with env.database.write() as db:
        return submit_decision(db, env.actor(user), item.id, data)
