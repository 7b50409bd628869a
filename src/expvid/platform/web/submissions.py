"""Writing a reviewer's submission (an annotator's decision, an adjudicator's resolution) under this
platform's rules, the same way from the pages and from the JSON API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request

from expvid.platform.services.errors import Actor
from expvid.platform.web.deps import database_of, settings_of

T = TypeVar("T")


def write_submission(request: Request, service: Callable[..., T], actor: Actor, item_id: int, data: Any) -> T:
    """Run `service` (`submit_decision` or `resolve`) in a write transaction, retried on a
    serialization failure, with the configured minimum justification and field lengths."""
    settings = settings_of(request)
    return database_of(request).write_retry(
        lambda db: service(
            db, actor, item_id, data, min_justification=settings.min_justification, bounds=settings.limits
        )
    )
