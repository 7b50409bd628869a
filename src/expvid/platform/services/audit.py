"""The append-only audit trail: every change records who, when, what (before/after) and why."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from expvid.platform.db.models import AuditEvent, utc_now
from expvid.platform.services.errors import Actor


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
) -> AuditEvent:
    event = AuditEvent(
        at=utc_now(),
        actor_id=actor.id,
        actor_name=actor.name,
        item_id=item_id,
        entity=entity,
        entity_id=str(entity_id),
        action=action,
        before=before,
        after=after,
        reason=reason,
    )
    db.add(event)
    return event


def record_many(db: Session, actor: Actor, action: str, entries: list[dict[str, Any]]) -> None:
    """Append many events of one kind in one statement (imports and assignment runs write thousands).

    Each entry has `entity`, `entity_id` and optionally `item_id`, `before`, `after`, `reason`.
    """
    if not entries:
        return
    now = utc_now()
    rows = [
        {
            "at": now,
            "actor_id": actor.id,
            "actor_name": actor.name,
            "item_id": entry.get("item_id"),
            "entity": entry["entity"],
            "entity_id": str(entry["entity_id"]),
            "action": action,
            "before": entry.get("before"),
            "after": entry.get("after"),
            "reason": entry.get("reason"),
        }
        for entry in entries
    ]
    db.execute(insert(AuditEvent), rows)


def item_history(db: Session, item_id: int) -> list[AuditEvent]:
    """Every event about an item, oldest first."""
    return list(db.scalars(select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id)))
