"""Initial schema of the verification platform, with the append-only audit trail.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# Frozen copies of the column types (a migration must not import the models, which move on).
TS = sa.DateTime(timezone=True)
JSON_T = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

_SQLITE_APPEND_ONLY = [
    """CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
       BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END""",
    """CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
       BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END""",
]
_POSTGRES_APPEND_ONLY = [
    """CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'audit_events is append-only'; END $$""",
    """CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
       FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()""",
    """CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
       FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()""",
]

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "import_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("root", sa.Text(), nullable=False),
        sa.Column("imported_at", TS, nullable=False),
        sa.Column("imported_by", sa.String(length=64), nullable=False),
        sa.Column("summary", JSON_T, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_batches")),
    )
    op.create_table(
        "login_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("success", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_attempts")),
    )
    op.create_index("ix_login_attempts_ip_at", "login_attempts", ["ip", "at"], unique=False)
    op.create_index("ix_login_attempts_user_at", "login_attempts", ["username", "at"], unique=False)
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("disciplines", JSON_T, nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("username", name=op.f("uq_users_username")),
    )
    op.create_table(
        "experiments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("video_id", sa.String(length=128), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("discipline", sa.String(length=128), nullable=True),
        sa.Column("duration", sa.Float(), nullable=True),
        sa.Column("full_video", sa.Text(), nullable=True),
        sa.Column("paper_md", sa.Text(), nullable=True),
        sa.Column("full_steps", JSON_T, nullable=False),
        sa.Column("steps_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["import_batches.id"], name=op.f("fk_experiments_batch_id_import_batches")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiments")),
        sa.UniqueConstraint("video_id", name=op.f("uq_experiments_video_id")),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_seen_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_web_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_web_sessions_token_hash")),
    )
    op.create_index(op.f("ix_web_sessions_user_id"), "web_sessions", ["user_id"], unique=False)
    op.create_table(
        "segments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("segment_key", sa.String(length=255), nullable=False),
        sa.Column("experiment_id", sa.Integer(), nullable=False),
        sa.Column("clip", sa.Text(), nullable=True),
        sa.Column("start", sa.Float(), nullable=True),
        sa.Column("end", sa.Float(), nullable=True),
        sa.Column("steps", JSON_T, nullable=False),
        sa.Column("original_steps", JSON_T, nullable=False),
        sa.ForeignKeyConstraint(
            ["experiment_id"], ["experiments.id"], name=op.f("fk_segments_experiment_id_experiments")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_segments")),
        sa.UniqueConstraint("segment_key", name=op.f("uq_segments_segment_key")),
    )
    op.create_index(op.f("ix_segments_experiment_id"), "segments", ["experiment_id"], unique=False)
    op.create_table(
        "items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("task", sa.String(length=48), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("discipline", sa.String(length=128), nullable=False),
        sa.Column("video_id", sa.String(length=128), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("experiment_id", sa.Integer(), nullable=True),
        sa.Column("segment_id", sa.Integer(), nullable=True),
        sa.Column("video_path", sa.Text(), nullable=False),
        sa.Column("source_video", sa.Text(), nullable=True),
        sa.Column("window_start", sa.Float(), nullable=True),
        sa.Column("window_end", sa.Float(), nullable=True),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("options", JSON_T, nullable=True),
        sa.Column("answer", JSON_T, nullable=False),
        sa.Column("asr_caption", sa.Text(), nullable=False),
        sa.Column("record", JSON_T, nullable=False),
        sa.Column("provenance", JSON_T, nullable=False),
        sa.Column("flags", JSON_T, nullable=False),
        sa.Column("created_by_user_id", sa.Integer(), nullable=True),
        sa.Column("creator", sa.String(length=128), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("settled_via", sa.String(length=16), nullable=True),
        sa.Column("settled_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["import_batches.id"], name=op.f("fk_items_batch_id_import_batches")
        ),
        sa.ForeignKeyConstraint(
            ["created_by_user_id"], ["users.id"], name=op.f("fk_items_created_by_user_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["experiment_id"], ["experiments.id"], name=op.f("fk_items_experiment_id_experiments")
        ),
        sa.ForeignKeyConstraint(["segment_id"], ["segments.id"], name=op.f("fk_items_segment_id_segments")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
        sa.UniqueConstraint("key", name=op.f("uq_items_key")),
    )
    op.create_index(op.f("ix_items_experiment_id"), "items", ["experiment_id"], unique=False)
    op.create_index(op.f("ix_items_segment_id"), "items", ["segment_id"], unique=False)
    op.create_index(op.f("ix_items_state"), "items", ["state"], unique=False)
    op.create_index("ix_items_state_discipline_task", "items", ["state", "discipline", "task"], unique=False)
    op.create_index(op.f("ix_items_task"), "items", ["task"], unique=False)
    op.create_index(op.f("ix_items_video_id"), "items", ["video_id"], unique=False)
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("content", JSON_T, nullable=True),
        sa.Column("matched_decisions", JSON_T, nullable=False),
        sa.Column("justification", sa.Text(), nullable=False),
        sa.Column("item_version", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_adjudications_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_adjudications_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_adjudications")),
    )
    op.create_index(op.f("ix_adjudications_item_id"), "adjudications", ["item_id"], unique=False)
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("assigned_at", TS, nullable=False),
        sa.Column("opened_at", TS, nullable=True),
        sa.Column("completed_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_assignments_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_assignments_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignments")),
        sa.UniqueConstraint("item_id", "slot", name=op.f("uq_assignments_item_id_slot")),
        sa.UniqueConstraint("item_id", "user_id", name=op.f("uq_assignments_item_id_user_id")),
    )
    op.create_index("ix_assignments_user_completed", "assignments", ["user_id", "completed_at"], unique=False)
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor_name", sa.String(length=64), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=True),
        sa.Column("entity", sa.String(length=32), nullable=False),
        sa.Column("entity_id", sa.String(length=255), nullable=False),
        sa.Column("action", sa.String(length=48), nullable=False),
        sa.Column("before", JSON_T, nullable=True),
        sa.Column("after", JSON_T, nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["actor_id"], ["users.id"], name=op.f("fk_audit_events_actor_id_users")),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], name=op.f("fk_audit_events_item_id_items")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    op.create_index(op.f("ix_audit_events_at"), "audit_events", ["at"], unique=False)
    op.create_index(op.f("ix_audit_events_item_id"), "audit_events", ["item_id"], unique=False)
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("proposal", JSON_T, nullable=True),
        sa.Column("justification", sa.Text(), nullable=False),
        sa.Column("item_version", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("stale", sa.Boolean(), nullable=False),
        sa.Column("seconds_spent", sa.Float(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_decisions_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_decisions_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decisions")),
        sa.UniqueConstraint("item_id", "user_id", name=op.f("uq_decisions_item_id_user_id")),
    )
    op.create_index(op.f("ix_decisions_item_id"), "decisions", ["item_id"], unique=False)
    op.create_index(op.f("ix_decisions_user_id"), "decisions", ["user_id"], unique=False)

    # The audit trail is append-only at the database level, not only by convention in the code.
    dialect = op.get_bind().dialect.name
    for statement in _POSTGRES_APPEND_ONLY if dialect == "postgresql" else _SQLITE_APPEND_ONLY:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_truncate ON audit_events")
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_change ON audit_events")
        op.execute("DROP FUNCTION IF EXISTS audit_events_append_only()")
    op.drop_index(op.f("ix_decisions_user_id"), table_name="decisions")
    op.drop_index(op.f("ix_decisions_item_id"), table_name="decisions")
    op.drop_table("decisions")
    op.drop_index(op.f("ix_audit_events_item_id"), table_name="audit_events")
    op.drop_index(op.f("ix_audit_events_at"), table_name="audit_events")
    op.drop_table("audit_events")
    op.drop_index("ix_assignments_user_completed", table_name="assignments")
    op.drop_table("assignments")
    op.drop_index(op.f("ix_adjudications_item_id"), table_name="adjudications")
    op.drop_table("adjudications")
    op.drop_index(op.f("ix_items_video_id"), table_name="items")
    op.drop_index(op.f("ix_items_task"), table_name="items")
    op.drop_index("ix_items_state_discipline_task", table_name="items")
    op.drop_index(op.f("ix_items_state"), table_name="items")
    op.drop_index(op.f("ix_items_segment_id"), table_name="items")
    op.drop_index(op.f("ix_items_experiment_id"), table_name="items")
    op.drop_table("items")
    op.drop_index(op.f("ix_segments_experiment_id"), table_name="segments")
    op.drop_table("segments")
    op.drop_index(op.f("ix_web_sessions_user_id"), table_name="web_sessions")
    op.drop_table("web_sessions")
    op.drop_table("experiments")
    op.drop_table("users")
    op.drop_index("ix_login_attempts_user_at", table_name="login_attempts")
    op.drop_index("ix_login_attempts_ip_at", table_name="login_attempts")
    op.drop_table("login_attempts")
    op.drop_table("import_batches")
