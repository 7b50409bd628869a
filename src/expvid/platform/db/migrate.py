"""Alembic, driven from Python: the CLI and the tests upgrade a database to the newest schema.

The migration scripts live in `expvid/platform/migrations/` (shipped inside the package, so an
installed wheel can migrate without an `alembic.ini`).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from expvid.platform.db.engine import make_engine, normalize_url

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships migrations
        raise RuntimeError(f"no Alembic migrations found in {MIGRATIONS_DIR}")
    return head


def upgrade_to_head(url: str) -> str:
    """Bring the database at `url` to the newest schema (creating it if empty); returns the revision."""
    engine = make_engine(normalize_url(url), pool_size=1)
    try:
        with engine.begin() as connection:
            config = alembic_config()
            # env.py uses this connection instead of building its own engine from a URL string.
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
        return head_revision()
    finally:
        engine.dispose()


def current_revision(url: str) -> str | None:
    """The revision the database is at, or None for an empty database."""
    engine = make_engine(normalize_url(url), pool_size=1)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
