"""Alembic environment: runs migrations on the connection handed over by `expvid.platform.db.migrate`."""

from __future__ import annotations

from alembic import context

from expvid.platform.db.models import Base

target_metadata = Base.metadata


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError(
            "run migrations through expvid (`expvid platform migrate` or expvid.platform.db.upgrade_to_head)"
        )
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
