"""Database layer: ORM models, engines and Alembic migrations."""

from expvid.platform.db.engine import Database, make_engine, normalize_url
from expvid.platform.db.migrate import current_revision, head_revision, upgrade_to_head

__all__ = ["Database", "current_revision", "head_revision", "make_engine", "normalize_url", "upgrade_to_head"]
