"""What the pages show of validity audits: why an item is in the re-review queue, and the queue.

Every page of an item (each review template, both adjudication pages) includes
`_audit_findings.html` with `audit_findings(db, item)`; `/rereview` lists the queue as far as the
viewer may see it (an annotator: their own assigned items; an adjudicator: conflicts in their
disciplines; an admin: all).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, AuditFile, AuditFinding, Item
from expvid.platform.services.access import discipline_matches
from expvid.platform.services.audit_queue import QUEUE_STATES, findings_of
from expvid.platform.services.errors import Actor


def _percent(value: Any) -> str:
    return f"{100 * float(value):.1f}%" if isinstance(value, int | float) else "?"


def _flag_view(detail: dict[str, Any]) -> dict[str, Any]:
    view = {"flag": detail.get("flag", ""), "reason": detail.get("reason", ""), "kind": detail.get("kind"),
            "description": detail.get("description", "")}  # fmt: skip
    if detail.get("picked"):
        view["picked"] = detail["picked"]
    if detail.get("kind") == "solver":
        view["figures"] = (
            f"{_percent(detail.get('accuracy'))} on {detail.get('task')} against chance "
            f"{_percent(detail.get('chance'))} (95% CI {_percent(detail.get('ci_low'))}-"
            f"{_percent(detail.get('ci_high'))}, n={detail.get('n')})"
        )
    return view


def audit_findings(db: Session, item: Item) -> list[dict[str, Any]]:
    """The item's findings, newest first, each with its audit and one entry per flag."""
    findings = findings_of(db, item.id)
    files = {
        f.id: f
        for f in db.scalars(select(AuditFile).where(AuditFile.id.in_({x.audit_file_id for x in findings})))
    }
    views = []
    for finding in findings:
        audit_file = files[finding.audit_file_id]
        views.append(
            {
                "audit": audit_file.sha256[:12],
                "source": audit_file.source,
                "applied_at": audit_file.applied_at,
                "audit_item_id": finding.audit_item_id,
                "open": item.state in QUEUE_STATES and finding.upstream_version == item.upstream_version,
                "flags": [_flag_view(detail) for detail in finding.details],
            }
        )
    return views


def queue_rows(db: Session, actor: Actor) -> list[tuple[Item, list[str]]]:
    """Items in the re-review queue the viewer may open, with their flags (union over audits)."""
    query = (
        select(Item, AuditFinding)
        .join(AuditFinding, AuditFinding.item_id == Item.id)
        .where(Item.state.in_(QUEUE_STATES), Item.upstream_version == AuditFinding.upstream_version)
        .order_by(Item.id, AuditFinding.id)
    )
    if actor.role == "annotator":
        query = query.join(
            Assignment, (Assignment.item_id == Item.id) & (Assignment.user_id == actor.id)
        ).where(Assignment.completed_at.is_(None))
    rows: dict[int, tuple[Item, list[str]]] = {}
    for item, finding in db.execute(query).all():
        if actor.role == "adjudicator" and (
            item.state != "conflict" or not discipline_matches(actor.disciplines, item.discipline)
        ):
            continue
        _, flags = rows.setdefault(item.id, (item, []))
        flags.extend(flag for flag in finding.flags if flag not in flags)
    return list(rows.values())
