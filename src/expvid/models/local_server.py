"""A server this process starts on this machine and talks to over HTTP: a managed vLLM, a fake API.

What every such server shares: its address from `host` and `port` (the port is known once it is
bound), and a `with` block that starts it and stops it however the block ends.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self


class LocalServer:
    """Subclasses set `host` and `port` and implement `start()` (returning the server) and `stop()`."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
