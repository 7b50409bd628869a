"""The Alembic migrations produce exactly the models' schema, and the audit trail is append-only."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from platform_env import Env
from sqlalchemy import inspect, text
from sqlalchemy.exc import DBAPIError

from expvid.platform.db.engine import make_engine
from expvid.platform.db.migrate import alembic_config, current_revision, head_revision, upgrade_to_head
from expvid.platform.db.models import Base


def test_migrated_schema_matches_the_models(db_url: str) -> None:
    assert current_revision(db_url) == head_revision()
    engine = make_engine(db_url, pool_size=1)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_upgrade_is_idempotent_and_downgrade_round_trips(db_url: str) -> None:
    assert upgrade_to_head(db_url) == head_revision()
    engine = make_engine(db_url, pool_size=1)
    try:
        with engine.begin() as connection:
            config = alembic_config()
            config.attributes["connection"] = connection
            command.downgrade(config, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()
    assert current_revision(db_url) is None
    upgrade_to_head(db_url)
    assert "audit_events" in inspect(make_engine(db_url, pool_size=1)).get_table_names()


@pytest.mark.parametrize(
    "statement", ["UPDATE audit_events SET reason = 'rewritten'", "DELETE FROM audit_events"]
)
def test_the_database_refuses_to_rewrite_history(env: Env, statement: str) -> None:
    with env.database.engine.connect() as connection:
        before = connection.execute(text("SELECT count(*), min(reason) FROM audit_events")).one()
    assert before[0] > 0
    with pytest.raises(DBAPIError, match="append-only"), env.database.write() as db:
        db.execute(text(statement))
    with env.database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*), min(reason) FROM audit_events")).one() == before
