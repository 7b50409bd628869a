"""What each page shows, assembled from the database (the templates only lay it out)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, AuditEvent, Decision, Experiment, Item, Segment, User
from expvid.platform.guidelines import guidelines_for
from expvid.platform.services.access import can_adjudicate
from expvid.platform.services.audit import item_history
from expvid.platform.services.authoring import can_author
from expvid.platform.services.errors import Actor
from expvid.platform.services.level2 import rows_from_steps
from expvid.platform.services.review import own_decision, uses_step_editor
from expvid.platform.services.settlement import segment_steps
from expvid.platform.services.tasks import LEVEL3_TASKS, TASKS, task_spec
from expvid.schema import OPTION_LETTERS, count_blanks

#: Audit actions an annotator may see on an open item without learning the other annotator's judgement.
_BLIND_SAFE_ACTIONS = {"item.imported", "item.created", "item.rebuilt", "steps.changed", "item.reopened"}


def media_for(item: Item) -> dict[str, Any]:
    """Which file the player loads and which window it is clamped to.

    With the source video available the player seeks to the clip's window inside it (the reviewer
    can see the context the clip was cut from); otherwise it plays the clip file whole.
    """
    if item.source_video and item.window_start is not None and item.window_end is not None:
        return {
            "url": f"/media/items/{item.id}/source",
            "start": item.window_start,
            "end": item.window_end,
            "clip_url": f"/media/items/{item.id}/clip",
        }
    return {"url": f"/media/items/{item.id}/clip", "start": None, "end": None, "clip_url": None}


def answer_text(item: Item) -> str:
    kind = task_spec(item.task).kind
    if kind == "step_list" and isinstance(item.answer, list):
        return ", ".join(str(a) for a in item.answer)
    if kind == "blanks" and isinstance(item.answer, list):
        return "\n".join(str(a) for a in item.answer)
    return str(item.answer)


def review_context(
    db: Session,
    actor: Actor,
    item: Item,
    *,
    form: dict[str, Any] | None = None,
    problems: list[str] | None = None,
) -> dict[str, Any]:
    spec = task_spec(item.task)
    decision = own_decision(db, actor, item.id) if actor.role == "annotator" else None
    assignment = (
        db.scalar(select(Assignment).where(Assignment.item_id == item.id, Assignment.user_id == actor.id))
        if actor.role == "annotator"
        else None
    )
    experiment = db.get(Experiment, item.experiment_id) if item.experiment_id else None
    step_editor = uses_step_editor(item)
    rows: list[dict[str, Any]] = []
    segment = None
    if step_editor:
        segment = db.get(Segment, item.segment_id)
        assert segment is not None
        rows = [r.as_dict() for r in rows_from_steps(segment_steps(segment))]
    all_decisions = []
    if actor.role == "admin":
        users = {u.id: u.username for u in db.scalars(select(User))}
        all_decisions = [
            {"user": users.get(d.user_id), "decision": d}
            for d in db.scalars(select(Decision).where(Decision.item_id == item.id).order_by(Decision.id))
        ]
    editable = actor.role == "annotator" and item.state in ("pending", "in_review")
    return {
        "item": item,
        "spec": spec,
        "guide": guidelines_for(item.task),
        "media": media_for(item),
        "decision": decision,
        "assignment": assignment,
        "editable": editable,
        "closed": actor.role == "annotator" and not editable,
        "step_editor": step_editor,
        "rows": rows,
        "segment": segment,
        "experiment": experiment,
        "full_steps": experiment.full_steps if experiment else [],
        "paper": experiment.paper_md if experiment and item.level == 3 else None,
        "full_video_url": f"/media/experiments/{experiment.video_id}/full"
        if experiment and experiment.full_video
        else None,
        "can_author": item.level == 3 and experiment is not None and can_author(db, actor, experiment),
        "level3_tasks": [(t, TASKS[t].title) for t in LEVEL3_TASKS],
        "answer_text": answer_text(item),
        "blanks": count_blanks(item.question) if spec.kind == "blanks" else 0,
        "letters": list((item.options or {}).keys()) or list(OPTION_LETTERS[: spec.n_options or 0]),
        "form": form or {},
        "problems": problems or [],
        "all_decisions": all_decisions,
        "can_adjudicate": can_adjudicate(actor, item),
    }


def visible_history(db: Session, actor: Actor, item: Item) -> list[AuditEvent]:
    """The item's audit trail as this user may see it.

    Admins see everything. Annotators see everything once the item is final; before that, only their
    own actions and content changes, so review stays blind. Adjudicators see the trail of items they
    resolved (once final).
    """
    events = item_history(db, item.id)
    final = item.state in ("verified", "rejected")
    if actor.role == "admin" or final:
        return events
    return [e for e in events if e.actor_id == actor.id or e.action in _BLIND_SAFE_ACTIONS]
