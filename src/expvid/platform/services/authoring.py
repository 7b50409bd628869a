"""Level-3 authoring: experts write new fill-in-the-blank questions beside the paper and full video.

ExpVid section 3.3: PhD-level annotators "design two types of fill-in-the-blank question based on
experiment videos and corresponding paper" with one precise answer per blank. A question written on
the platform is a new candidate like any other: it goes to two *other* annotators (never its author)
and is exported only once verified.
"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from expvid.platform.config import InputLimits
from expvid.platform.db.models import Assignment, Experiment, Item, utc_now
from expvid.platform.services import audit, limits
from expvid.platform.services.assignment import assign_pending
from expvid.platform.services.campaign_settings import annotators_per_item
from expvid.platform.services.content import Content, ContentError, validate_content
from expvid.platform.services.errors import Actor, Forbidden, InvalidInput, NotFound
from expvid.platform.services.identity import platform_key
from expvid.platform.services.tasks import LEVEL3_TASKS


def can_author(db: Session, actor: Actor, experiment: Experiment) -> bool:
    """Admins, and annotators who have a Level-3 item of this experiment (they have watched it)."""
    if actor.role == "admin":
        return True
    if actor.role != "annotator" or actor.id is None:
        return False
    return bool(
        db.scalar(
            select(
                exists().where(
                    Assignment.user_id == actor.id,
                    Assignment.item_id == Item.id,
                    Item.experiment_id == experiment.id,
                    Item.level == 3,
                )
            )
        )
    )


def get_authorable_experiment(db: Session, actor: Actor, video_id: str) -> Experiment:
    experiment = db.scalar(select(Experiment).where(Experiment.video_id == video_id))
    if experiment is None or not can_author(db, actor, experiment):
        raise NotFound(f"experiment {video_id} not found")
    return experiment


def _next_id(db: Session, task: str) -> int:
    ids = []
    for (record,) in db.execute(select(Item.record).where(Item.task == task)):
        raw = record.get("id")
        if isinstance(raw, int) or (isinstance(raw, str) and raw.isdigit()):
            ids.append(int(raw))
    return max(ids, default=0) + 1


def create_level3_question(
    db: Session,
    actor: Actor,
    *,
    video_id: str,
    task: str,
    question: str,
    answers: list[str],
    justification: str,
    min_justification: int = 5,
    bounds: InputLimits = limits.DEFAULT_LIMITS,
) -> Item:
    if actor.role not in ("annotator", "admin"):
        raise Forbidden("only annotators and admins write questions")
    experiment = get_authorable_experiment(db, actor, video_id)
    problems = limits.too_long("the justification", justification, bounds.justification)
    problems += limits.content_problems(Content(question, None, answers), bounds)
    if problems:
        raise InvalidInput(problems)
    if task not in LEVEL3_TASKS:
        problems.append(f"the task must be one of {', '.join(LEVEL3_TASKS)}")
    if len(justification.strip()) < min_justification:
        problems.append(f"a justification of at least {min_justification} characters is required")
    content = Content(question=question.strip(), options=None, answer=[a.strip() for a in answers])
    if task in LEVEL3_TASKS:
        try:
            validate_content(task, content)
        except ContentError as error:
            problems.extend(error.problems)
    template = db.scalar(select(Item).where(Item.experiment_id == experiment.id, Item.level == 3).limit(1))
    video_path = experiment.full_video or (template.video_path if template else None)
    if video_path is None:
        problems.append(f"experiment {video_id} has no full video to attach the question to")
    if problems:
        raise InvalidInput(problems)
    assert video_path is not None
    new_id = _next_id(db, task)
    discipline = experiment.discipline or (template.discipline if template else "unspecified")
    record = {
        "id": new_id,
        "video_path": video_path,
        "question": content.question,
        "answer": content.answer,
        "asr_caption": "",
        "video_id": video_id,
        "category": discipline,
    }
    now = utc_now()
    item = Item(
        key=platform_key(f"{task}/{new_id}"),
        release_key=f"{task}/{new_id}",
        upstream_version=1,
        task=task,
        level=3,
        discipline=discipline,
        video_id=video_id,
        batch_id=template.batch_id if template else experiment.batch_id,
        experiment_id=experiment.id,
        video_path=video_path,
        question=content.question,
        options=None,
        answer=content.answer,
        asr_caption="",
        record=record,
        provenance={"drafts": [{"stage": "expert", "author": actor.name, "at": now.isoformat()}]},
        flags=[],
        created_by_user_id=actor.id,
        creator=actor.name,
        state="pending",
        version=1,
        created_at=now,
        updated_at=now,
        annotators_required=annotators_per_item(db),
    )
    db.add(item)
    db.flush()
    audit.record(
        db, actor, "item.created", entity="item", entity_id=item.id, item_id=item.id,
        after=content.as_dict(), reason=justification.strip(),
    )  # fmt: skip
    assign_pending(db)  # never to the author: assignment skips the item's creator
    return item
