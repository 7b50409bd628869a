"""API tokens, form drafts (POST-redirect-GET), per-(account, client) throttling, assignment gaps.

- `api_tokens`: personal tokens for scripts, stored as SHA-256 digests;
- `form_drafts`: what a refused form held, for the page its refusal redirects to;
- `login_attempts (username, ip, at)`: the throttle counts failures per account and client;
- `items.short_of_annotators`: slots the last assignment run could not fill;
- `adjudications.own_edit`: the adjudicator's final content matches none of the versions shown.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("read_only", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_used_at", TS, nullable=True),
        sa.Column("expires_at", TS, nullable=True),
        sa.Column("revoked_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index(op.f("ix_api_tokens_user_id"), "api_tokens", ["user_id"], unique=False)
    op.create_table(
        "form_drafts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=255), nullable=False),
        sa.Column("data", JSON_T, nullable=False),
        sa.Column("problems", JSON_T, nullable=False),
        sa.Column("conflict", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["web_sessions.id"],
            name=op.f("fk_form_drafts_session_id_web_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_form_drafts")),
        sa.UniqueConstraint("token", name=op.f("uq_form_drafts_token")),
    )
    op.create_index(op.f("ix_form_drafts_session_id"), "form_drafts", ["session_id"], unique=False)
    op.create_index("ix_login_attempts_user_ip_at", "login_attempts", ["username", "ip", "at"], unique=False)
    # Plain ALTER TABLE ... ADD COLUMN on both backends: a batch "move and copy" of `items` on SQLite
    # would drop the table that decisions, assignments and the append-only audit trail refer to.
    op.add_column("items", sa.Column("short_of_annotators", sa.Integer(), nullable=False, server_default="0"))
    op.add_column(
        "adjudications", sa.Column("own_edit", sa.Boolean(), nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    # SQLite >= 3.35 drops a column in place (no table copy, see upgrade()).
    op.execute("ALTER TABLE adjudications DROP COLUMN own_edit")
    op.execute("ALTER TABLE items DROP COLUMN short_of_annotators")
    op.drop_index("ix_login_attempts_user_ip_at", table_name="login_attempts")
    op.drop_index(op.f("ix_form_drafts_session_id"), table_name="form_drafts")
    op.drop_table("form_drafts")
    op.drop_index(op.f("ix_api_tokens_user_id"), table_name="api_tokens")
    op.drop_table("api_tokens")
