"""Counters a backend keeps for the run manifest and the progress bar.

Plain integers mutated from one event loop: no locks needed, and a snapshot is a cheap dict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass
class BackendStats:
    requests: int = 0  # HTTP attempts sent (retries included, cache hits not)
    successes: int = 0  # attempts that produced a response
    retries: int = 0  # attempts that were repeated after a failure
    rate_limited: int = 0  # 429 answers
    server_errors: int = 0  # 5xx answers
    timeouts: int = 0  # attempts that ran past timeout_s
    network_errors: int = 0  # refused, reset or dropped connections
    malformed: int = 0  # 200 answers whose body was not a usable completion
    param_fallbacks: int = 0  # 400s naming an unsupported parameter, answered by resending without it
    failures: int = 0  # generate() calls that raised BackendError
    cache_hits: int = 0
    limit: int = 0  # the adaptive limiter's current number of slots
    max_limit: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0

    def snapshot(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class ReportsStats(Protocol):
    """Backends that count their traffic (all of expvid's do); the runner checks with isinstance."""

    def stats(self) -> BackendStats: ...
