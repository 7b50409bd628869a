"""An ASGI app served on 127.0.0.1 from a daemon thread: how every fake server here runs.

The socket is bound here (port 0: the OS picks a free one, so parallel test runs never collide)
with TCP_NODELAY and `proto=IPPROTO_TCP`: asyncio sets TCP_NODELAY only on accepted sockets whose
proto says TCP, and without it every keep-alive response waits ~40 ms on Nagle and delayed ACKs.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Self

import uvicorn

from expvid.models.local_server import LocalServer


class ServerThread:
    """uvicorn serving `app` in a daemon thread; `port` is the one bound. Start it with `start()`."""

    def __init__(
        self, app: Any, *, host: str, port: int = 0, name: str, force_exit: bool = False, **config: Any
    ) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        self.port: int = sock.getsockname()[1]
        self.name = name
        #: Stop without waiting for open connections (a client stuck in a throttled download).
        self.force_exit = force_exit
        settings: dict[str, Any] = {
            "log_config": None,
            "log_level": "warning",
            "access_log": False,
            "lifespan": "off",
            "http": "h11",
            **config,
        }
        self._server = uvicorn.Server(uvicorn.Config(app, **settings))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=f"{name}-{self.port}", daemon=True
        )

    def start(self, timeout_s: float) -> ServerThread:
        """Run the server; `RuntimeError` (after stopping it) when it is not serving within `timeout_s`."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} on port {self.port} did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._server.force_exit = self.force_exit
        self._thread.join(timeout=10)


class FakeServer(LocalServer):
    """Start and stop of a fake server (and, as every `LocalServer`, its `url` and `with` block); a
    subclass says how it is served.

    Subclasses set `host` and `port` (0 until started) and implement `_server_thread()`.
    """

    _serving: ServerThread | None = None

    def _server_thread(self) -> ServerThread:
        raise NotImplementedError

    def start(self, timeout_s: float = 10.0) -> Self:
        if self._serving is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        serving = self._server_thread()
        self.port = serving.port
        self._serving = serving.start(timeout_s)
        return self

    def stop(self) -> None:
        if self._serving is not None:
            self._serving.stop()
        self._serving = None
