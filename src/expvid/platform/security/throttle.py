"""Login throttling: too many recent failures for a user name or an address refuse further tries.

Attempts are stored in the database so that the limit holds across server workers and restarts.
A refused attempt is not verified at all (no password oracle while throttled).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.models import LoginAttempt, utc_now


@dataclass(frozen=True)
class ThrottleVerdict:
    allowed: bool
    retry_after_s: int = 0


def check_throttle(db: Session, policy: ThrottlePolicy, *, username: str, ip: str) -> ThrottleVerdict:
    since = utc_now() - timedelta(seconds=policy.window_seconds)
    failed = (LoginAttempt.success.is_(False)) & (LoginAttempt.at > since)
    by_user = db.execute(
        select(func.count(), func.min(LoginAttempt.at)).where(failed, LoginAttempt.username == username)
    ).one()
    by_ip = db.execute(
        select(func.count(), func.min(LoginAttempt.at)).where(failed, LoginAttempt.ip == ip)
    ).one()
    for (count, oldest), limit in (
        (by_user, policy.max_failures_per_user),
        (by_ip, policy.max_failures_per_ip),
    ):
        if count >= limit:
            wait = (
                policy.window_seconds - (utc_now() - oldest).total_seconds()
                if oldest
                else policy.window_seconds
            )
            return ThrottleVerdict(False, max(1, int(wait) + 1))
    return ThrottleVerdict(True)


def record_attempt(db: Session, *, username: str, ip: str, success: bool) -> None:
    db.add(LoginAttempt(username=username[:64], ip=ip[:64], success=success, at=utc_now()))
    if success:
        # A successful login clears that user's failure count (the per-address count stays).
        db.execute(
            delete(LoginAttempt).where(
                LoginAttempt.username == username[:64], LoginAttempt.success.is_(False)
            )
        )
