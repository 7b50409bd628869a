"""Stopping a run that cannot succeed: a run of identical errors that retrying cannot cure.

A request refused with the same 4xx (other than 408, 409, 429) for item after item says the run
itself is wrong, not the items: a model name with a typo (404), a model served only on another API
(`openai:gpt-5-pro`, 400 "only supported in v1/responses"), a parameter the server refuses, a key
without access (401/403). Going on would record the same failure for every remaining item, and a
resume would send them all again. Inspect's `fail_on_error` is the anchor: a run stops once errors
show it cannot succeed. Here the rule is narrower, so that no run with a working model is ever
stopped: `limit` consecutive failures (in the order they come back) with the same status and the
same message, and no success between them. A server that cannot be reached at all (connection
refused, a name that does not resolve, a TLS handshake that fails: a wrong port or URL) counts the
same way: every item would wait through its retries and fail alike. Other transient failures (429,
5xx, timeouts, a dropped connection) and media failures (a damaged video is the item's problem)
neither count nor break the streak.

What was answered and the failures themselves are already in `predictions.jsonl`; the failed items
are retried on resume, so a fixed configuration picks up where the stopped run ended.
"""

from __future__ import annotations

import re

from expvid.models.retry import RETRYABLE_4XX
from expvid.schema import DataError, ErrorKind, Prediction

#: Stop after this many identical non-transient errors in a row (`--stop-after-errors`, 0: never).
DEFAULT_STOP_AFTER = 10
_ATTEMPTS = re.compile(r"\s*\(after \d+ attempts?\)\s*$")


class RunStopped(DataError):
    """The run stopped early: the same non-transient error kept coming back (resumable)."""


def error_signature(prediction: Prediction) -> tuple[int, str] | None:
    """(status, message) of a failure that retrying cannot cure (status 0: the server could not be
    reached), or None for anything else."""
    if prediction.ok or prediction.error_kind is not ErrorKind.REQUEST:
        return None
    if prediction.meta.get("unreachable"):
        return 0, _ATTEMPTS.sub("", prediction.error or "")
    status = prediction.meta.get("status")
    if not isinstance(status, int) or not 400 <= status < 500 or status in RETRYABLE_4XX:
        return None
    return status, _ATTEMPTS.sub("", prediction.error or "")


class ErrorStreak:
    """Counts consecutive identical non-transient failures; says when the run should stop."""

    def __init__(self, limit: int | None = DEFAULT_STOP_AFTER) -> None:
        self.limit = limit if limit else None
        self.signature: tuple[int, str] | None = None
        self.count = 0

    def record(self, prediction: Prediction) -> str | None:
        """Account for one outcome; the one-line stop message once the streak reaches the limit."""
        if prediction.ok:
            self.signature, self.count = None, 0
            return None
        signature = error_signature(prediction)
        if signature is None:
            return None  # transient or the item's own problem: neither counts nor breaks the streak
        if signature == self.signature:
            self.count += 1
        else:
            self.signature, self.count = signature, 1
        if self.limit is None or self.count < self.limit:
            return None
        return (
            f"stopped after {self.count} requests in a row failed with the same error ({signature[1]}); "
            "another item would fail the same way. Fix the cause (model name, API, parameters, key, URL) and "
            "re-run the same command to resume: finished items are kept, failed ones retried "
            "(--stop-after-errors 0 never stops)"
        )
