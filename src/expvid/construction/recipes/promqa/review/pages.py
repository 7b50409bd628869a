"""The review and adjudication pages of procedural (ProMQA-style) items, as in ProMQA's Figure 11.

The page shows (B.3): the recipe graph with each step's status in the example (passed green, current
orange, not passed dotted, a warning mark on steps with errors), the recording up to the end of the
prefix, the list of previous and current steps with their error descriptions, and the judgement
form: is the question valid, is each answer correct (shown once the question is judged valid), and
answers the annotator writes (one per line). Templates only lay this out.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from expvid.construction.recipes.promqa.graph import RecipeError, RecipeGraph
from expvid.construction.recipes.promqa.graph_render import recipe_svg, statuses
from expvid.construction.recipes.promqa.review.judgements import (
    JudgementInput,
    ProceduralResolution,
    adjudication_view,
    judgement_of,
    machine_answers,
)
from expvid.platform.db.models import Assignment, Decision, Item, User
from expvid.platform.services.access import can_adjudicate
from expvid.platform.services.errors import Actor, InvalidInput
from expvid.platform.web.media_info import frame_rate
from expvid.platform.web.views import media_file, media_for

#: ProMQA's verification criteria, as its interface (Figure 11) and appendix A.2 state them.
CRITERIA = {
    "question": "Is this a valid multimodal question about procedural activities?",
    "multimodal": "Multimodal: Answering the question requires information from both its video and recipe.",
    "procedural": "Procedural activity: The question is about orders, missing steps, etc...",
    "other": "Other points: e.g., natural/nonsensical, vague, external knowledge, grammar, answerable, etc...",
    "answer": "Is this answer correct?",
    "write": "Write correct answers if you choose no above, and/or other potential answers. "
    "Write one sentence for each answer/target step (one per line).",
    "suggestions": "Answers may be direct, suggestions (extra actions to rectify an earlier error) or "
    "interventions (start over from an earlier point when an error cannot be fixed).",
}


def _recipe(item: Item) -> RecipeGraph | None:
    data = (item.provenance or {}).get("recipe")
    if not isinstance(data, dict):
        return None
    try:
        return RecipeGraph.from_release(str(data.get("activity_id", "")), str(data.get("name", "")), data)
    except RecipeError:
        return None


def _steps(record: dict[str, Any]) -> dict[str, Any]:
    return {"previous": list(record.get("previous_steps") or []), "current": record.get("current_step") or {}}


def example_context(db: Session, item: Item) -> dict[str, Any]:
    """What both pages show about the example: graph, steps, player."""
    record = item.record if isinstance(item.record, dict) else {}
    recipe = _recipe(item)
    svg = None
    if recipe is not None:
        status, flagged = statuses(
            recipe, record.get("previous_steps") or [], record.get("current_step") or {}
        )
        svg = recipe_svg(recipe, status, flagged)
    media = media_for(item)
    path = media_file(db, item)
    return {
        "item": item,
        "record": record,
        "recipe_svg": svg,
        "steps": _steps(record),
        "noisy": bool(record.get("is_noisy")),
        "activity": record.get("activity_name", item.discipline),
        "media": media,
        "fps": frame_rate(path) if path is not None else None,
        "timeline": None,
        "machine_answers": machine_answers(item),
        "criteria": CRITERIA,
        "next_url": f"/next/{item.id}",
    }


def review_context(
    db: Session,
    actor: Actor,
    item: Item,
    *,
    form: dict[str, Any] | None = None,
    problems: list[str] | None = None,
) -> dict[str, Any]:
    decision = (
        db.scalar(select(Decision).where(Decision.item_id == item.id, Decision.user_id == actor.id))
        if actor.role == "annotator"
        else None
    )
    mine = judgement_of(decision) if decision is not None and not decision.stale else None
    all_judgements = []
    if actor.role == "admin" or item.state in ("verified", "rejected"):
        users = {u.id: u.username for u in db.scalars(select(User))}
        slots = dict(
            db.execute(select(Assignment.user_id, Assignment.slot).where(Assignment.item_id == item.id)).all()
        )
        for row in db.scalars(select(Decision).where(Decision.item_id == item.id).order_by(Decision.id)):
            if actor.role == "admin" or row.user_id == actor.id:
                all_judgements.append(
                    {
                        "user": users.get(row.user_id),
                        "slot": slots.get(row.user_id),
                        "judge": judgement_of(row),
                        "note": row.justification,
                    }
                )
    editable = actor.role == "annotator" and item.state in ("pending", "in_review")
    return {
        **example_context(db, item),
        "decision": decision,
        "mine": mine,
        "editable": editable,
        "closed": actor.role == "annotator" and not editable,
        "form": form or {},
        "problems": problems or [],
        "all_judgements": all_judgements,
        "can_adjudicate": can_adjudicate(actor, item),
    }


def adjudication_context(db: Session, actor: Actor, item_id: int) -> dict[str, Any]:
    view = adjudication_view(db, actor, item_id)
    item = db.get(Item, item_id)
    assert item is not None
    return {**example_context(db, item), "view": view}


def _yes_no(value: Any) -> bool | None:
    text = str(value or "").strip().lower()
    return True if text in ("yes", "true") else False if text in ("no", "false") else None


def _int(form: FormData, name: str) -> int:
    value = str(form.get(name) or "0")
    if not value.isdigit() or len(value) > 9:
        raise InvalidInput([f"{name} must be a number"])
    return int(value)


def written_answers(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


def judgement_from_form(item: Item, form: FormData) -> JudgementInput:
    n = len(machine_answers(item))
    return JudgementInput(
        question_valid=_yes_no(form.get("question_valid")),
        answers=[_yes_no(form.get(f"answer_{i}")) for i in range(n)],
        written=written_answers(str(form.get("written") or "")),
        note=str(form.get("note") or ""),
        item_version=_int(form, "item_version"),
        decision_version=_int(form, "decision_version"),
    )


def resolution_from_form(form: FormData) -> ProceduralResolution:
    answers: dict[int, bool] = {}
    for key in form:
        if key.startswith("answer_") and key[7:].isdigit() and len(key) < 14:
            value = _yes_no(form.get(key))
            if value is not None:
                answers[int(key[7:])] = value
    return ProceduralResolution(
        question_valid=_yes_no(form.get("question_valid")),
        answers=answers,
        written=written_answers(str(form.get("written") or "")),
        justification=str(form.get("justification") or ""),
        item_version=_int(form, "item_version"),
    )
