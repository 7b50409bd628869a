"""What the batch clients built on a provider's official SDK (Anthropic, Gemini) share: the retries.

A read (poll, results, listing, cancel) is asked again on 429 / 408 / 409 / 5xx and network errors.
A create is asked again only when it certainly did not reach the API (a connection never made, or a
429: the provider's queue); a 5xx or a connection that broke after the request went out may have
made the batch, so it ends in `BatchAPIError.uncertain` and the caller looks the batch up first.
The SDKs' own retries are off, as for the online backends.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from expvid.models.batch.types import HTTP_RETRIES, BatchAPIError, BatchHandle, create_failure, retry_pause

T = TypeVar("T")


class SDKBatchClient:
    """A batch client over an SDK whose errors are `status_error` (an answer with an error status)
    and `transport_errors` (the network); subclasses say how to read them."""

    status_error: type[BaseException]
    transport_errors: tuple[type[BaseException], ...]

    def __init__(self, client: Callable[[], Any]) -> None:
        self._client = client
        self._rng = random.Random()

    def _status(self, error: Any) -> tuple[int, str]:
        """The HTTP status and the message of a `status_error`."""
        raise NotImplementedError

    def _not_sent(self, error: BaseException) -> bool:
        """Whether a transport error happened before the request was sent (repeating it is safe)."""
        raise NotImplementedError

    async def _call(self, what: str, make: Callable[[], Awaitable[T]], *, create: bool = False) -> T:
        """A call retried on 429 / 5xx / network errors; a `create` only when it certainly did not
        reach the API (else `BatchAPIError.uncertain`: the batch may exist)."""
        for attempt in range(HTTP_RETRIES + 1):
            last = attempt == HTTP_RETRIES
            try:
                return await make()
            except self.status_error as error:
                status, message = self._status(error)
                failure = (
                    create_failure(what, status, message, last=last)
                    if create
                    else _read_failure(what, status, message, last=last)
                )
                if failure is not None:
                    raise failure from None
            except self.transport_errors as error:
                if create and not self._not_sent(error):
                    raise BatchAPIError(f"{what}: {type(error).__name__}: {error}", uncertain=True) from None
                if last:
                    raise BatchAPIError(f"{what}: {type(error).__name__}: {error}") from None
            await asyncio.sleep(retry_pause(attempt, self._rng))
        raise AssertionError("unreachable")

    async def upload(self, lines_file: Path) -> str | None:
        return None  # the requests go inline in the create call

    async def cleanup(self, handle: BatchHandle) -> None:
        return None  # inline requests leave no input file behind


def _read_failure(what: str, status: int, message: str, *, last: bool) -> BatchAPIError | None:
    """What a call that is safe to repeat ends in after an error `status`; None: try it again."""
    if (status >= 500 or status in (408, 409, 429)) and not last:
        return None
    return BatchAPIError(f"{what}: HTTP {status}: {message}")
