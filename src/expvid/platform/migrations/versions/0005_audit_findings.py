"""Audits applied to the platform (`expvid platform audit`): the re-review queue.

- `audit_files`: each `audit.json` applied, once per content hash, with its solver results;
- `audit_findings`: the flags one audit gave one item (why it is in the re-review queue).

Revision ID: 0005
Revises: 0004
Create Date: 2027-03-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("data", sa.Text(), nullable=True),
        sa.Column("suite", sa.String(length=64), nullable=True),
        sa.Column("applied_at", TS, nullable=False),
        sa.Column("applied_by", sa.String(length=64), nullable=False),
        sa.Column("solvers", JSON_T, nullable=False),
        sa.Column("summary", JSON_T, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_files")),
        sa.UniqueConstraint("sha256", name=op.f("uq_audit_files_sha256")),
    )
    op.create_table(
        "audit_findings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("audit_file_id", sa.Integer(), nullable=False),
        sa.Column("audit_item_id", sa.String(length=255), nullable=False),
        sa.Column("flags", JSON_T, nullable=False),
        sa.Column("reasons", JSON_T, nullable=False),
        sa.Column("details", JSON_T, nullable=False),
        sa.Column("state_before", sa.String(length=16), nullable=False),
        sa.Column("upstream_version", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_audit_findings_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["audit_file_id"], ["audit_files.id"], name=op.f("fk_audit_findings_audit_file_id_audit_files")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_findings")),
        sa.UniqueConstraint("item_id", "audit_file_id", name=op.f("uq_audit_findings_item_id_audit_file_id")),
    )
    op.create_index(op.f("ix_audit_findings_item_id"), "audit_findings", ["item_id"])
    op.create_index(op.f("ix_audit_findings_audit_file_id"), "audit_findings", ["audit_file_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_audit_findings_audit_file_id"), table_name="audit_findings")
    op.drop_index(op.f("ix_audit_findings_item_id"), table_name="audit_findings")
    op.drop_table("audit_findings")
    op.drop_table("audit_files")
