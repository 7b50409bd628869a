"""ORM tables of the verification platform (SQLAlchemy 2, typed mappings).

The schema is owned by Alembic (`expvid/platform/migrations`); these classes must stay identical to
the migrated schema, which a test checks with Alembic's autogenerate comparison.

Vocabulary:
- an *item* is one candidate question (one release record) under review;
- an *assignment* gives an item to one annotator (two per item by default: double annotation);
- a *decision* is one annotator's judgement of one item (approve / edit / reject + justification);
- an *adjudication* is an adjudicator's final call on an item whose two decisions conflict;
- an *audit event* records every change, append-only (database triggers refuse UPDATE and DELETE).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

#: Constraint names are fixed by convention so that migrations and models agree on both backends.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: JSON everywhere, stored as JSONB on PostgreSQL (comparable, indexable), TEXT-backed JSON on SQLite.
JsonType = JSON().with_variant(JSONB(), "postgresql")


def utc_now() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both backends (SQLite would otherwise hand back naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database; use timezone-aware UTC")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))  # annotator | adjudicator | admin
    #: Disciplines this person reviews (case-insensitive); empty means any discipline.
    disciplines: Mapped[list[str]] = mapped_column(JsonType, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)


class WebSession(Base):
    """A login session. Only a SHA-256 of the cookie token is stored, so a database leak does not
    hand out live sessions."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class LoginAttempt(Base):
    __tablename__ = "login_attempts"
    __table_args__ = (
        Index("ix_login_attempts_user_at", "username", "at"),
        Index("ix_login_attempts_ip_at", "ip", "at"),
        #: Throttling counts failures per (account, client) since that pair's last success.
        Index("ix_login_attempts_user_ip_at", "username", "ip", "at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64))
    ip: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    success: Mapped[bool] = mapped_column(Boolean)


class ImportBatch(Base):
    """One `expvid platform import DIR`; media paths of its items are relative to `root`."""

    __tablename__ = "import_batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    root: Mapped[str] = mapped_column(Text)
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    imported_by: Mapped[str] = mapped_column(String(64))
    summary: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    #: Identity namespace of this directory's items that carry no `uid` (older candidate
    #: directories): `dir-<sha256 of the resolved path>`, so that two builds never collide.
    namespace: Mapped[str | None] = mapped_column(String(64), nullable=True)


class Experiment(Base):
    """One experiment video: its full step list (Level-2), paper sections and full video (Level-3)."""

    __tablename__ = "experiments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    video_id: Mapped[str] = mapped_column(String(128), unique=True)
    batch_id: Mapped[int] = mapped_column(ForeignKey("import_batches.id"))
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    discipline: Mapped[str | None] = mapped_column(String(128), nullable=True)
    duration: Mapped[float | None] = mapped_column(Float, nullable=True)
    full_video: Mapped[str | None] = mapped_column(Text, nullable=True)
    paper_md: Mapped[str | None] = mapped_column(Text, nullable=True)
    full_steps: Mapped[list[str]] = mapped_column(JsonType, default=list)
    #: Bumped whenever the full step list changes; Level-2 decisions are made against one version.
    steps_version: Mapped[int] = mapped_column(Integer, default=1)


class Segment(Base):
    """A Level-2 segment: its clip and its steps (numbers index the experiment's full step list)."""

    __tablename__ = "segments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    segment_key: Mapped[str] = mapped_column(String(255), unique=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("experiments.id"), index=True)
    clip: Mapped[str | None] = mapped_column(Text, nullable=True)
    start: Mapped[float | None] = mapped_column(Float, nullable=True)
    end: Mapped[float | None] = mapped_column(Float, nullable=True)
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    #: The segment as imported, kept for export provenance.
    original_steps: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)


class Item(Base):
    __tablename__ = "items"
    __table_args__ = (Index("ix_items_state_discipline_task", "state", "discipline", "task"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: The item's stable identity, unique across the database and across imports: the candidate
    #: directory's `uid` (`<task>/<id>` with an experiment-namespaced id, stable from build to
    #: build); `dir-<hash>:<task>/<id>` for a directory without uids (keyed per directory, so two
    #: builds never collide); `platform:<task>/<id>` for a question written on the platform.
    key: Mapped[str] = mapped_column(String(255), unique=True)
    #: "<task>/<release id>" as people and the release know it (not unique: two directories without
    #: uids may both have a `materials/0`; the export refuses such a clash among verified items).
    release_key: Mapped[str] = mapped_column(String(255), index=True, server_default="")
    #: SHA-256 of what a reviewer sees, as the candidate directory states it (`content_sha256`) or
    #: as computed on import; a later import with another value is a new version of the item.
    content_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: 1 for the first import; +1 each time a later import brings changed content.
    upstream_version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    task: Mapped[str] = mapped_column(String(48), index=True)
    level: Mapped[int] = mapped_column(Integer)
    discipline: Mapped[str] = mapped_column(String(128))
    video_id: Mapped[str] = mapped_column(String(128), index=True)
    batch_id: Mapped[int] = mapped_column(ForeignKey("import_batches.id"))
    experiment_id: Mapped[int | None] = mapped_column(ForeignKey("experiments.id"), nullable=True, index=True)
    segment_id: Mapped[int | None] = mapped_column(ForeignKey("segments.id"), nullable=True, index=True)
    video_path: Mapped[str] = mapped_column(Text)
    #: The longer source video this clip was cut from and the clip's window in it (provenance).
    source_video: Mapped[str | None] = mapped_column(Text, nullable=True)
    window_start: Mapped[float | None] = mapped_column(Float, nullable=True)
    window_end: Mapped[float | None] = mapped_column(Float, nullable=True)
    question: Mapped[str] = mapped_column(Text)
    options: Mapped[dict[str, str] | None] = mapped_column(JsonType, nullable=True)
    answer: Mapped[Any] = mapped_column(JsonType)
    asr_caption: Mapped[str] = mapped_column(Text, default="")
    #: The release record as imported (unknown fields are exported again unchanged).
    record: Mapped[dict[str, Any]] = mapped_column(JsonType)
    provenance: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    flags: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    created_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    #: Who drafted the item: a user name, or a model name from the provenance drafts.
    creator: Mapped[str | None] = mapped_column(String(128), nullable=True)
    state: Mapped[str] = mapped_column(String(16), index=True)
    #: Optimistic lock: every change of the content or state bumps it; saves name the version seen.
    version: Mapped[int] = mapped_column(Integer, default=1)
    settled_via: Mapped[str | None] = mapped_column(String(16), nullable=True)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    #: Annotator slots the last assignment run could not fill (too few eligible annotators); 0 when
    #: the item has all its annotators. Shown on the dashboard until an admin adds someone.
    short_of_annotators: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Independent judgements the item needs (1-5; the paper's 2 by default), fixed when it is
    #: imported or written (`platform_settings.annotators_per_item`, or `import --annotators`).
    annotators_required: Mapped[int] = mapped_column(Integer, default=2, server_default="2")


class Assignment(Base):
    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("item_id", "slot"),
        UniqueConstraint("item_id", "user_id"),
        Index("ix_assignments_user_completed", "user_id", "completed_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    slot: Mapped[int] = mapped_column(Integer)  # 1 .. the item's annotators_required
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    #: First time the annotator opened the item: the start of "time per item".
    opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class ReleasedAssignment(Base):
    """An assignment taken back from an annotator (deactivated, or reassigned by an admin) before
    they decided: the history of who held the slot, and a rule for assignment runs (an item is
    never routed back automatically to someone who gave it back; an admin may add them explicitly)."""

    __tablename__ = "released_assignments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    slot: Mapped[int] = mapped_column(Integer)
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime())
    opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    released_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    released_by: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(Text)


class Decision(Base):
    __tablename__ = "decisions"
    __table_args__ = (UniqueConstraint("item_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    verdict: Mapped[str] = mapped_column(String(16))  # approve | edit | reject
    #: For "edit": the proposed content ({"question", "options", "answer"}; Level-2 adds "steps").
    proposal: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    justification: Mapped[str] = mapped_column(Text)
    #: The item version this judgement was made against.
    item_version: Mapped[int] = mapped_column(Integer)
    #: Optimistic lock of the decision itself (two tabs of one reviewer).
    version: Mapped[int] = mapped_column(Integer, default=1)
    #: Set when the item's content changed after this decision (it must be made again).
    stale: Mapped[bool] = mapped_column(Boolean, default=False)
    seconds_spent: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)


class Adjudication(Base):
    __tablename__ = "adjudications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    outcome: Mapped[str] = mapped_column(String(16))  # verified | rejected
    content: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    #: Ids of the decisions whose proposal the final content equals (hidden from the adjudicator).
    matched_decisions: Mapped[list[int]] = mapped_column(JsonType, default=list)
    justification: Mapped[str] = mapped_column(Text)
    item_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    #: The final content is the adjudicator's own edit (it matches none of the versions shown).
    own_edit: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class AuditEvent(Base):
    """Append-only trail: who did what, when, to what, and why."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now, index=True)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    actor_name: Mapped[str] = mapped_column(String(64))
    item_id: Mapped[int | None] = mapped_column(ForeignKey("items.id"), nullable=True, index=True)
    entity: Mapped[str] = mapped_column(String(32))
    entity_id: Mapped[str] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(48))
    before: Mapped[Any | None] = mapped_column(JsonType, nullable=True)
    after: Mapped[Any | None] = mapped_column(JsonType, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: SHA-256 linking this event to the one before it (`db/audit_chain.py`); written at commit.
    chain: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ApiToken(Base):
    """A personal token for scripts (`Authorization: Bearer ...` on the JSON API).

    Like sessions, only a SHA-256 of the token is stored; `prefix` (the first characters) lets its
    owner tell tokens apart. A token acts with its user's *current* role and dies with the account.
    """

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    read_only: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class FormDraft(Base):
    """What a reviewer typed into a form the server refused, kept for the page the refusal
    redirects to (POST-redirect-GET: reloading that page never re-posts)."""

    __tablename__ = "form_drafts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("web_sessions.id", ondelete="CASCADE"), index=True)
    path: Mapped[str] = mapped_column(String(255))
    data: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    problems: Mapped[list[str]] = mapped_column(JsonType, default=list)
    conflict: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)


class Release(Base):
    """A numbered export (`expvid platform export`), immutable like the audit trail (database
    triggers refuse UPDATE and DELETE): its manifest lists every item with content hashes, who
    reviewed it and the agreement, so that two releases can be compared (`expvid platform diff`)."""

    __tablename__ = "releases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    number: Mapped[int] = mapped_column(Integer, unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    created_by: Mapped[str] = mapped_column(String(64))
    #: public | full (--no-public) | hf | a recipe's own export format
    kind: Mapped[str] = mapped_column(String(16))
    item_count: Mapped[int] = mapped_column(Integer)
    manifest: Mapped[dict[str, Any]] = mapped_column(JsonType)
    #: SHA-256 of the manifest as written beside the release (`release.json`).
    manifest_sha256: Mapped[str] = mapped_column(String(64))


class PlatformSetting(Base):
    """Campaign settings kept with the data (`expvid platform settings`), e.g. annotators per item."""

    __tablename__ = "platform_settings"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[Any] = mapped_column(JsonType)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_by: Mapped[str] = mapped_column(String(64))


class AuditFile(Base):
    """An `audit.json` (`expvid audit`, or the release gate of `expvid build`) applied to the
    platform's items, once per content (`sha256` of the file): applying it again changes nothing."""

    __tablename__ = "audit_files"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    #: Where it was read from (as given), and the release it audited (`data` in the file).
    source: Mapped[str] = mapped_column(Text)
    data: Mapped[str | None] = mapped_column(Text, nullable=True)
    suite: Mapped[str | None] = mapped_column(String(64), nullable=True)
    applied_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    applied_by: Mapped[str] = mapped_column(String(64))
    #: Every solver result of the audit (name, task, description, accuracy, chance, interval, n, flagged).
    solvers: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    #: What applying it did: items matched, flagged, reopened; ids that matched no item.
    summary: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)


class AuditFinding(Base):
    """Why one item is in the re-review queue: the flags one audit gave it. The item stays in the
    queue until it is settled again (verified or rejected) at the upstream version that was flagged."""

    __tablename__ = "audit_findings"
    __table_args__ = (UniqueConstraint("item_id", "audit_file_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    audit_file_id: Mapped[int] = mapped_column(ForeignKey("audit_files.id"), index=True)
    #: The item's id in the audit (the suite's own id).
    audit_item_id: Mapped[str] = mapped_column(String(255))
    #: Names of what flagged it, in the audit's order; `reasons`: flag -> the audit's why.
    flags: Mapped[list[str]] = mapped_column(JsonType, default=list)
    reasons: Mapped[dict[str, str]] = mapped_column(JsonType, default=dict)
    #: Per flag: what it is (solver description or check), and for a solver its result on the task.
    details: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    #: The item's state and upstream version when it was flagged.
    state_before: Mapped[str] = mapped_column(String(16))
    upstream_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
