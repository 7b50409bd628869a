"""What to do after a failed attempt: classify it, and compute how long to wait before the next one.

Every backend (whatever its SDK) turns a failed attempt into an `AttemptFailure`; one retry loop in
`remote.py` then applies the same policy everywhere:

- 429: retryable; halves the concurrency limit; waits Retry-After when the server gives one.
- 408, 409, 5xx, network errors, timeouts, malformed bodies: retryable with full-jitter backoff.
- other 4xx (bad request, auth, not found, too large): final at once, retrying cannot help.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any

from expvid.schema import ErrorKind

RETRYABLE_4XX = frozenset({408, 409, 429})


class AttemptFailure(Exception):
    """One attempt failed; `retryable` says whether another attempt could succeed."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        kind: ErrorKind = ErrorKind.REQUEST,
        retry_after_s: float | None = None,
        category: str = "request",
        sent: dict[str, Any] | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.kind = kind
        self.retry_after_s = retry_after_s
        #: Which counter it feeds: rate_limited, server_error, timeout, network, malformed, request.
        self.category = category
        #: What the failed attempt sent (recorded with a final failure), when the backend knows.
        self.sent = sent or {}
        #: The server could not be reached at all (connection refused, DNS, TLS handshake): a run
        #: pointed at the wrong place, which `--stop-after-errors` counts like a 4xx.
        self.unreachable = unreachable

    @property
    def rate_limited(self) -> bool:
        return self.status == 429

    @classmethod
    def timeout(cls, detail: str, *, sent: dict[str, Any] | None = None) -> AttemptFailure:
        return cls(
            f"timed out: {detail}", retryable=True, kind=ErrorKind.TIMEOUT, category="timeout", sent=sent
        )

    @classmethod
    def network(
        cls, detail: str, *, sent: dict[str, Any] | None = None, unreachable: bool = False
    ) -> AttemptFailure:
        label = "cannot reach the server" if unreachable else "network error"
        return cls(
            f"{label}: {detail}", retryable=True, category="network", sent=sent, unreachable=unreachable
        )

    @classmethod
    def malformed(cls, detail: str, *, retryable: bool = True) -> AttemptFailure:
        return cls(f"malformed response: {detail}", retryable=retryable, category="malformed")


#: Names of the transport errors raised before any byte of a request went out: connection refused,
#: DNS, TLS handshake (httpx / httpx2 ConnectError, aiohttp ClientConnectorError and its subclasses).
UNREACHABLE_ERRORS = frozenset(
    {"ConnectError", "ClientConnectorError", "ClientConnectorDNSError", "ClientConnectorSSLError",
     "ClientConnectorCertificateError", "ClientSSLError"}
)  # fmt: skip


def unreachable(error: BaseException | None) -> bool:
    """Whether a transport error (or the one it wraps) says the server could not be reached."""
    while error is not None:
        if type(error).__name__ in UNREACHABLE_ERRORS:
            return True
        error = error.__cause__
    return False


def failure_for_status(status: int, headers: Mapping[str, str], detail: str) -> AttemptFailure:
    """Classify an HTTP error status; `detail` is a short excerpt of the body for the message."""
    detail = " ".join(detail.split())[:300]
    message = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
    if status == 429 or status >= 500:
        return AttemptFailure(
            message,
            retryable=True,
            status=status,
            retry_after_s=retry_after_seconds(headers),
            category="rate_limited" if status == 429 else "server_error",
        )
    return AttemptFailure(message, retryable=status in RETRYABLE_4XX, status=status)


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say (or said nonsense).

    Understands `Retry-After` as delta-seconds ("2", "1.5") or an HTTP-date
    ("Wed, 21 Oct 2015 07:28:00 GMT", RFC 9110 10.2.3), and OpenAI's `retry-after-ms`.
    A date in the past means "now" (0 s).
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 else None
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" parses zone-less; RFC 9110 dates are always GMT
        when = when.replace(tzinfo=UTC)
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def backoff_delay(attempt: int, *, base_s: float, max_s: float, rng: random.Random | None = None) -> float:
    """Full jitter: uniform(0, min(max_s, base_s * 2**attempt)) for the attempt-th retry (0-based).

    Full jitter spreads retries of many clients evenly instead of having them return in waves.
    """
    ceiling = min(max_s, base_s * (2.0 ** min(attempt, 62)))
    return (rng or random).uniform(0.0, ceiling)
