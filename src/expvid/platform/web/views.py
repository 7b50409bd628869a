"""What each page shows, assembled from the database (the templates only lay it out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import (
    Assignment,
    AuditEvent,
    Decision,
    Experiment,
    ImportBatch,
    Item,
    Segment,
    User,
)
from expvid.platform.guidelines import guidelines_for
from expvid.platform.services.access import can_adjudicate, discipline_matches
from expvid.platform.services.assignment import eligible_annotators
from expvid.platform.services.audit import item_history
from expvid.platform.services.authoring import can_author
from expvid.platform.services.errors import Actor
from expvid.platform.services.level2 import rows_from_steps
from expvid.platform.services.recipe_hooks import hooks_for_task
from expvid.platform.services.review import own_decision, uses_step_editor
from expvid.platform.services.settlement import segment_steps
from expvid.platform.services.tasks import LEVEL3_TASKS, TASKS, task_spec
from expvid.platform.web.media_info import frame_rate
from expvid.schema import OPTION_LETTERS, count_blanks

#: Audit actions an annotator may see on an open item without learning the other annotator's judgement.
_BLIND_SAFE_ACTIONS = {"item.imported", "item.created", "item.rebuilt", "steps.changed", "item.reopened"}


def media_for(item: Item) -> dict[str, Any]:
    """Which file the player loads, the window it is clamped to, and spans cut from the clip.

    With the source video available the player seeks to the clip's window inside it (the reviewer
    can see the context the clip was cut from) and skips the spans the build removed from the clip
    (a completeness-verification clip lacks one step: the reviewer sees what the model sees);
    otherwise it plays the clip file whole.
    """
    if item.source_video and item.window_start is not None and item.window_end is not None:
        source = (item.provenance or {}).get("source")
        removed = source.get("removed") if isinstance(source, dict) else None
        spans = [
            [float(a), float(b)]
            for a, b in (removed if isinstance(removed, list) else [])
            if isinstance(a, int | float) and isinstance(b, int | float) and b > a
        ]
        return {
            "url": f"/media/items/{item.id}/source",
            "start": item.window_start,
            "end": item.window_end,
            "removed": spans,
            "clip_url": f"/media/items/{item.id}/clip",
        }
    return {
        "url": f"/media/items/{item.id}/clip",
        "start": None,
        "end": None,
        "removed": [],
        "clip_url": None,
    }


#: (database URL, import batch id) -> the batch's root. A batch's root never changes once imported, and
#: this is only used for the frame rate, so a page view saves the query.
_BATCH_ROOTS: dict[tuple[str, int], str] = {}


def media_file(db: Session, item: Item) -> Path | None:
    """The file the player loads for `item` (for its frame rate), if it is there."""
    key = (str(db.get_bind().engine.url), item.batch_id)
    root = _BATCH_ROOTS.get(key)
    if root is None:
        batch = db.get(ImportBatch, item.batch_id)
        if batch is None:
            return None
        root = _BATCH_ROOTS.setdefault(key, batch.root)
    playing_source = item.source_video and item.window_start is not None and item.window_end is not None
    relative = item.source_video if playing_source else item.video_path
    path = Path(root) / (relative or "")
    return path if relative and path.is_file() else None


def timeline_for(item: Item, media: dict[str, Any], segment: Segment | None) -> dict[str, Any]:
    """What the timeline under the player shows, in the player's time.

    Step times are on the source video's clock. When the player shows the source, that is the
    player's clock too; when it shows a segment's clip file, the clip starts at the segment's start
    (`offset`). The page's script draws the bar once the video's duration is known.
    """
    playing_source = media.get("start") is not None
    offset = 0.0 if playing_source or segment is None or segment.start is None else float(segment.start)
    marks = []
    if segment is not None:
        for step in segment_steps(segment):
            if step.start is None or step.end is None:
                continue
            marks.append(
                {"label": str(step.number), "text": step.text, "start": step.start - offset,
                 "end": step.end - offset}
            )  # fmt: skip
    window = [media["start"], media["end"]] if playing_source else None
    return {"offset": offset, "window": window, "removed": media.get("removed") or [], "marks": marks}


def transcript_origin(item: Item) -> str | None:
    """Where the item's narration transcript came from, as the build recorded it: a file of the
    experiment's folder, or speech-to-text (engine, model, language), which reviewers should know
    when they judge the narration-based parts of an item."""
    data = (item.provenance or {}).get("transcript")
    if not isinstance(data, dict) or not data.get("engine"):
        return None
    if data["engine"] == "file":
        return f"the experiment's file {data.get('file') or ''}".strip()
    parts = ["speech-to-text", str(data["engine"]), str(data.get("model") or "")]
    if data.get("language"):
        parts.append(f"language {data['language']}")
    return " · ".join(p for p in parts if p)


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
    staffing: dict[str, Any] | None = None
    if actor.role == "admin":
        users = {u.id: u.username for u in db.scalars(select(User))}
        all_decisions = [
            {"user": users.get(d.user_id), "decision": d}
            for d in db.scalars(select(Decision).where(Decision.item_id == item.id).order_by(Decision.id))
        ]
        assigned = [
            users.get(uid)
            for uid in db.scalars(
                select(Assignment.user_id).where(Assignment.item_id == item.id).order_by(Assignment.slot)
            )
        ]
        staffing = {
            "assigned": assigned,
            "missing": max(0, item.annotators_required - len(assigned)),
            "candidates": [u.username for u in eligible_annotators(db, item)]
            if item.state in ("pending", "in_review")
            else [],
        }
    editable = actor.role == "annotator" and item.state in ("pending", "in_review")
    media = media_for(item)
    path = media_file(db, item)
    return {
        "item": item,
        "spec": spec,
        "guide": guidelines_for(item.task),
        "media": media,
        "fps": frame_rate(path) if path is not None else None,
        "timeline": timeline_for(item, media, segment),
        "staffing": staffing,
        # Resolved only when used (the "N" key): a page view does not pay for the query.
        "next_url": f"/next/{item.id}",
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
        "transcript_origin": transcript_origin(item),
        "blanks": count_blanks(item.question) if spec.kind == "blanks" else 0,
        "letters": list((item.options or {}).keys()) or list(OPTION_LETTERS[: spec.n_options or 0]),
        "form": form or {},
        "problems": problems or [],
        "all_decisions": all_decisions,
        "can_adjudicate": can_adjudicate(actor, item),
        # The page kind `timed-mcq`: the panel its recipe declares (`ReviewHooks.review_panel`),
        # laid out by the template the recipe ships (`panel_template`).
        "panel": _panel(item, experiment.paper_md if experiment else None),
        "panel_template": _panel_template(item),
    }


def _panel(item: Item, paper: str | None) -> dict[str, Any] | None:
    hooks = hooks_for_task(item.task)
    panel: dict[str, Any] | None = hooks.review_panel(item, paper) if hooks is not None else None
    return panel


def _panel_template(item: Item) -> str | None:
    hooks = hooks_for_task(item.task)
    return getattr(hooks, "panel_template", None) if hooks is not None else None


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


def next_url(db: Session, actor: Actor, item: Item) -> str | None:
    """Where "next item" goes from `item`: the reviewer's next open item (annotators), the next
    conflict (adjudicators), the next item by id (admins)."""
    if actor.role == "annotator" and actor.id is not None:
        query = (
            select(Assignment.item_id)
            .join(Item, Item.id == Assignment.item_id)
            .where(
                Assignment.user_id == actor.id,
                Assignment.completed_at.is_(None),
                Item.state.in_(("pending", "in_review")),
                Assignment.item_id != item.id,
            )
        )
        # The next open item after this one, wrapping around to the first: one query.
        following = db.scalar(query.order_by(Assignment.item_id < item.id, Assignment.item_id).limit(1))
        return f"/items/{following}" if following else "/"
    if actor.role == "adjudicator":
        mine = [
            item_id
            for item_id, discipline in db.execute(
                select(Item.id, Item.discipline)
                .where(Item.state == "conflict", Item.id != item.id)
                .order_by(Item.id)
            )
            if discipline_matches(actor.disciplines, discipline)
        ]
        conflict = next((i for i in mine if i > item.id), mine[0] if mine else None)
        return f"/adjudicate/{conflict}" if conflict else "/"
    following = db.scalar(select(Item.id).where(Item.id > item.id).order_by(Item.id).limit(1))
    return f"/items/{following}" if following else None
