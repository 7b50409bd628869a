"""Serving the viewer: uvicorn on a socket bound before start, so `--port 0` can print the real port."""

from __future__ import annotations

import socket
from collections.abc import Callable

from expvid.view.app import create_app
from expvid.view.render import render_overview
from expvid.view.rows import rows_json
from expvid.view.session import ViewSession


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (IPv6 when `host` is an IPv6 literal); OSError names what failed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio then sets TCP_NODELAY on accepted sockets (no 40 ms Nagle stalls).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket, host: str) -> str:
    port = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def warm(session: ViewSession) -> None:
    """Build the item list and the overview now, so the first page load does not wait for them."""
    with session.lock:
        rows_json(session)
        render_overview(session)


def serve(session: ViewSession, *, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve until interrupted; `ready(url)` is called once the socket is listening."""
    import uvicorn

    sock = bind(host, port)
    hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
    if host in ("0.0.0.0", "::"):
        hosts = ["*"]  # listening on every interface was asked for explicitly
    elif host not in hosts:
        hosts.append(host)
    app = create_app(session, allowed_hosts=hosts)
    warm(session)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_keep_alive=30)
    server = uvicorn.Server(config)
    ready(url_of(sock, host))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
