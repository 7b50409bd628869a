"""Stable item identities across imports, released assignments.

- `items.key` becomes the item's stable identity (the candidate directory's `uid`, or
  `dir-<hash of the directory>:<task>/<id>` for directories without one, or `platform:<task>/<id>`
  for questions written on the platform); the `<task>/<id>` people know moves to
  `items.release_key`. Existing rows were imported from directories without uids, so they are
  re-keyed per directory exactly as a re-import of that directory keys them now.
- `items.content_sha256`, `items.upstream_version`: which upstream version an item is.
- `import_batches.namespace`: the identity namespace of a directory's items without uid.
- `released_assignments`: assignments taken back before a decision (deactivation, reassignment).

Plain ALTER TABLE ... ADD COLUMN only (see 0002: a batch copy of `items` on SQLite would drop the
table that decisions, assignments and the append-only audit trail refer to).

Revision ID: 0003
Revises: 0002
Create Date: 2027-01-12
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _namespace(root: str) -> str:
    """Frozen copy of `expvid.platform.services.identity.directory_namespace`."""
    return "dir-" + hashlib.sha256(root.encode("utf-8")).hexdigest()[:12]


def _written_on_platform(provenance: Any) -> bool:
    drafts = provenance.get("drafts") if isinstance(provenance, dict) else None
    first = drafts[0] if isinstance(drafts, list) and drafts else None
    return isinstance(first, dict) and first.get("stage") == "expert"


def upgrade() -> None:
    op.add_column("items", sa.Column("release_key", sa.String(length=255), nullable=False, server_default=""))
    op.add_column("items", sa.Column("content_sha256", sa.String(length=64), nullable=True))
    op.add_column("items", sa.Column("upstream_version", sa.Integer(), nullable=False, server_default="1"))
    op.add_column("import_batches", sa.Column("namespace", sa.String(length=64), nullable=True))
    op.create_table(
        "released_assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("assigned_at", TS, nullable=False),
        sa.Column("opened_at", TS, nullable=True),
        sa.Column("released_at", TS, nullable=False),
        sa.Column("released_by", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_released_assignments_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_released_assignments_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_released_assignments")),
    )
    op.create_index(
        op.f("ix_released_assignments_item_id"), "released_assignments", ["item_id"], unique=False
    )
    op.create_index(
        op.f("ix_released_assignments_user_id"), "released_assignments", ["user_id"], unique=False
    )

    bind = op.get_bind()
    batches = sa.table("import_batches", sa.column("id", sa.Integer), sa.column("root", sa.Text),
                       sa.column("namespace", sa.String))  # fmt: skip
    items = sa.table("items", sa.column("id", sa.Integer), sa.column("key", sa.String),
                     sa.column("release_key", sa.String), sa.column("batch_id", sa.Integer),
                     sa.column("provenance", JSON_T))  # fmt: skip
    namespaces = {}
    for batch_id, root in bind.execute(sa.select(batches.c.id, batches.c.root)).all():
        namespaces[batch_id] = _namespace(root)
        bind.execute(batches.update().where(batches.c.id == batch_id).values(namespace=namespaces[batch_id]))
    rows = bind.execute(sa.select(items.c.id, items.c.key, items.c.batch_id, items.c.provenance)).all()
    for item_id, key, batch_id, provenance in rows:
        prefix = "platform" if _written_on_platform(provenance) else namespaces[batch_id]
        bind.execute(
            items.update().where(items.c.id == item_id).values(key=f"{prefix}:{key}", release_key=key)
        )
    op.create_index(op.f("ix_items_release_key"), "items", ["release_key"], unique=False)


def downgrade() -> None:
    bind = op.get_bind()
    items = sa.table("items", sa.column("id", sa.Integer), sa.column("key", sa.String),
                     sa.column("release_key", sa.String))  # fmt: skip
    taken: set[str] = set()
    rows = bind.execute(sa.select(items.c.id, items.c.key, items.c.release_key)).all()
    # Items keyed by their release key already (uids) first: they keep it, the others make way.
    for item_id, key, release_key in sorted(rows, key=lambda r: (r[1] != r[2], r[0])):
        # Two items with one release key (two directories without uids) keep their identity as key.
        old = release_key if release_key and release_key not in taken else key
        taken.add(old)
        bind.execute(items.update().where(items.c.id == item_id).values(key=old))
    op.drop_index(op.f("ix_items_release_key"), table_name="items")
    op.drop_index(op.f("ix_released_assignments_user_id"), table_name="released_assignments")
    op.drop_index(op.f("ix_released_assignments_item_id"), table_name="released_assignments")
    op.drop_table("released_assignments")
    op.execute("ALTER TABLE import_batches DROP COLUMN namespace")
    op.execute("ALTER TABLE items DROP COLUMN upstream_version")
    op.execute("ALTER TABLE items DROP COLUMN content_sha256")
    op.execute("ALTER TABLE items DROP COLUMN release_key")
