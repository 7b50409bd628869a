"""Audit hash chain, numbered releases, annotators per item, campaign settings.

- `audit_events.chain`: each event linked to the one before it (`db/audit_chain.py`); the existing
  trail is chained here, in id order (its append-only triggers are lifted for that and only that);
- `releases`: numbered, immutable exports with their manifests (append-only, like the trail);
- `items.annotators_required`: independent judgements an item needs (2, the paper's, for all
  existing items);
- `platform_settings`: campaign settings (annotators per item for new items).

Revision ID: 0004
Revises: 0003
Create Date: 2027-02-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from expvid.platform.db import audit_chain

TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_RELEASES_APPEND_ONLY = [
    """CREATE TRIGGER releases_no_update BEFORE UPDATE ON releases
       BEGIN SELECT RAISE(ABORT, 'releases are immutable'); END""",
    """CREATE TRIGGER releases_no_delete BEFORE DELETE ON releases
       BEGIN SELECT RAISE(ABORT, 'releases are immutable'); END""",
]
_POSTGRES_RELEASES_APPEND_ONLY = [
    """CREATE FUNCTION releases_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'releases are immutable'; END $$""",
    """CREATE TRIGGER releases_no_change BEFORE UPDATE OR DELETE ON releases
       FOR EACH ROW EXECUTE FUNCTION releases_immutable()""",
    """CREATE TRIGGER releases_no_truncate BEFORE TRUNCATE ON releases
       FOR EACH STATEMENT EXECUTE FUNCTION releases_immutable()""",
]
#: The trail's own triggers, as 0001 made them (SQLite has no way to disable a trigger).
_SQLITE_AUDIT_NO_UPDATE = """CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
       BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END"""


def _chain_existing_events() -> None:
    bind = op.get_bind()
    events = sa.table(
        "audit_events", sa.column("id", sa.Integer), sa.column("chain", sa.String),
        *(sa.column(name, JSON_T if name in ("before", "after") else sa.String) for name in audit_chain.COLUMNS),
    )  # fmt: skip
    postgres = bind.dialect.name == "postgresql"
    if postgres:
        op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_change")
    else:
        op.execute("DROP TRIGGER audit_events_no_update")
    previous: str | None = audit_chain.GENESIS
    last_id = 0
    while True:
        # Typed columns: JSON parsed on both backends, times and ids as each driver returns them.
        rows = (
            bind.execute(sa.select(events).where(events.c.id > last_id).order_by(events.c.id).limit(2000))
            .mappings()
            .all()
        )
        if not rows:
            break
        updates = []
        for row in rows:
            previous = audit_chain.link(previous, row)
            updates.append({"row_id": row["id"], "chain": previous})
        bind.execute(
            events.update().where(events.c.id == sa.bindparam("row_id")).values(chain=sa.bindparam("chain")),
            updates,
        )
        last_id = rows[-1]["id"]
    if postgres:
        op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_change")
    else:
        op.execute(_SQLITE_AUDIT_NO_UPDATE)


def upgrade() -> None:
    op.add_column("audit_events", sa.Column("chain", sa.String(length=64), nullable=True))
    _chain_existing_events()
    op.add_column("items", sa.Column("annotators_required", sa.Integer(), nullable=False, server_default="2"))
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("manifest", JSON_T, nullable=False),
        sa.Column("manifest_sha256", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_releases")),
        sa.UniqueConstraint("number", name=op.f("uq_releases_number")),
    )
    op.create_table(
        "platform_settings",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", JSON_T, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("updated_by", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_platform_settings")),
    )
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _POSTGRES_RELEASES_APPEND_ONLY if postgres else _SQLITE_RELEASES_APPEND_ONLY:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS releases_no_truncate ON releases")
        op.execute("DROP TRIGGER IF EXISTS releases_no_change ON releases")
        op.execute("DROP FUNCTION IF EXISTS releases_immutable()")
    op.drop_table("platform_settings")
    op.drop_table("releases")
    op.execute("ALTER TABLE items DROP COLUMN annotators_required")
    op.execute("ALTER TABLE audit_events DROP COLUMN chain")
