"""The append-only audit trail: every change records who, when, what (before/after) and why.

Events are collected on the session and written when its transaction commits, each linked to the
one before it by a hash (`db/audit_chain.py`). Writing them last, under one lock, is what keeps the
chain in id order: on PostgreSQL two transactions get their ids when they insert, not when they
commit, so events inserted mid-transaction could commit out of order. The lock is held only for
the final insert and the commit: the rows the events name (users, items) are locked for key share
before it is taken, so the transaction holding it never waits for anyone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import event, insert, select, text
from sqlalchemy.orm import Session

from expvid.platform.db import audit_chain
from expvid.platform.db.models import AuditEvent, Item, User, utc_now
from expvid.platform.services.errors import Actor

_PENDING = "expvid_audit_pending"
#: pg_advisory_xact_lock key of the audit trail's writer (any constant shared by all processes).
_PG_LOCK = 0x657870766964_61  # "expvid" "a"


def _pending(db: Session) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = db.info.setdefault(_PENDING, [])
    return rows


def record(
    db: Session,
    actor: Actor,
    action: str,
    *,
    entity: str,
    entity_id: str | int,
    item_id: int | None = None,
    before: Any = None,
    after: Any = None,
    reason: str | None = None,
) -> None:
    """Add an event to the transaction's trail (written at commit; nothing if it rolls back)."""
    _pending(db).append(
        {
            "at": utc_now(), "actor_id": actor.id, "actor_name": actor.name, "item_id": item_id,
            "entity": entity, "entity_id": str(entity_id), "action": action, "before": before,
            "after": after, "reason": reason,
        }
    )  # fmt: skip


def record_many(db: Session, actor: Actor, action: str, entries: list[dict[str, Any]]) -> None:
    """Add many events of one kind (imports and assignment runs write thousands).

    Each entry has `entity`, `entity_id` and optionally `item_id`, `before`, `after`, `reason`.
    """
    now = utc_now()
    _pending(db).extend(
        {
            "at": now, "actor_id": actor.id, "actor_name": actor.name, "item_id": entry.get("item_id"),
            "entity": entry["entity"], "entity_id": str(entry["entity_id"]), "action": action,
            "before": entry.get("before"), "after": entry.get("after"), "reason": entry.get("reason"),
        }
        for entry in entries
    )  # fmt: skip


def _lock_referenced(db: Session, rows: list[dict[str, Any]]) -> None:
    """PostgreSQL: take the key-share locks the inserts' foreign keys need, before the trail's lock."""
    for model, column in ((User, "actor_id"), (Item, "item_id")):
        ids = sorted({row[column] for row in rows if row[column] is not None})
        for start in range(0, len(ids), 1000):
            db.execute(
                select(model.id)
                .where(model.id.in_(ids[start : start + 1000]))
                .order_by(model.id)
                .with_for_update(read=True, key_share=True)
            )


def _write_pending(db: Session) -> None:
    rows = db.info.pop(_PENDING, None)
    if not rows:
        return
    # JSON values as the database will hand them back (tuples become lists, keys become text).
    for row in rows:
        for column in ("before", "after"):
            if row[column] is not None:
                row[column] = audit_chain.json_round_trip(row[column])
    if db.get_bind().dialect.name == "postgresql":
        _lock_referenced(db, rows)
        db.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
    previous = db.scalar(select(AuditEvent.chain).order_by(AuditEvent.id.desc()).limit(1))
    for row in rows:
        row["chain"] = previous = audit_chain.link(previous, row)
    db.execute(insert(AuditEvent), rows)


def _discard_pending(db: Session, *_args: Any) -> None:
    db.info.pop(_PENDING, None)


event.listen(Session, "before_commit", _write_pending)
event.listen(Session, "after_rollback", _discard_pending)
event.listen(Session, "after_soft_rollback", _discard_pending)


def chain_breaks(db: Session, *, chunk: int = 2000) -> list[audit_chain.Break]:
    """Events of the live trail whose hash chain does not hold (see `db/audit_chain.py`)."""

    def rows() -> Iterator[tuple[dict[str, Any], None]]:
        last = 0
        while True:
            batch = list(
                db.scalars(
                    select(AuditEvent).where(AuditEvent.id > last).order_by(AuditEvent.id).limit(chunk)
                )
            )
            if not batch:
                return
            for event_row in batch:
                yield {c: getattr(event_row, c) for c in ("id", "chain", *audit_chain.COLUMNS)}, None
            last = batch[-1].id

    return list(audit_chain.check(rows()))


def item_history(db: Session, item_id: int) -> list[AuditEvent]:
    """Every event about an item, oldest first."""
    return list(db.scalars(select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id)))
