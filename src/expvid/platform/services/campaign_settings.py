"""Campaign settings kept in the database (`platform_settings`), so every process and command sees
the same: how many independent judgements a new item needs.

The papers' protocol (double annotation, as the procedural-QA recipe's paper has it) is two
annotators per item, the default here. A campaign may ask for one (a pilot, a single expert) up to five (a reliability study);
agreement is then reported with multi-rater statistics (`services/agreement.py`). The number is
fixed on each item when it is imported or written (`Item.annotators_required`), so changing the
setting mid-campaign never changes what an item already under review needs.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from expvid.platform.db.models import PlatformSetting, utc_now
from expvid.platform.services import audit
from expvid.platform.services.errors import Actor, InvalidInput

ANNOTATORS_PER_ITEM = "annotators_per_item"
#: The paper's double annotation.
DEFAULT_ANNOTATORS = 2
MIN_ANNOTATORS, MAX_ANNOTATORS = 1, 5


def check_annotators(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_ANNOTATORS <= value <= MAX_ANNOTATORS:
        raise InvalidInput(
            [
                f"annotators per item must be a whole number from {MIN_ANNOTATORS} to {MAX_ANNOTATORS}, not {value!r}"
            ]
        )
    return value


def annotators_per_item(db: Session) -> int:
    """Judgements a new item needs (the campaign's setting, else the paper's two)."""
    value = db.scalar(select(PlatformSetting.value).where(PlatformSetting.key == ANNOTATORS_PER_ITEM))
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_ANNOTATORS


def set_annotators_per_item(db: Session, actor: Actor, value: int) -> int:
    """Set it for items imported or written from now on; returns the previous value."""
    if not actor.is_admin:
        raise InvalidInput(["only admins change campaign settings"])
    value = check_annotators(value)
    row = db.get(PlatformSetting, ANNOTATORS_PER_ITEM)
    before = annotators_per_item(db)
    if row is None:
        db.add(
            PlatformSetting(key=ANNOTATORS_PER_ITEM, value=value, updated_at=utc_now(), updated_by=actor.name)
        )
    else:
        row.value, row.updated_at, row.updated_by = value, utc_now(), actor.name
    audit.record(db, actor, "settings.changed", entity="setting", entity_id=ANNOTATORS_PER_ITEM,
                 before=before, after=value)  # fmt: skip
    return before
