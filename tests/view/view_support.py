"""Helpers for the viewer tests: runs made by the real CLI, a live server, a write detector."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.platform.testing import LiveServer
from expvid.view import ViewSession, create_app


@dataclass(frozen=True)
class SampleRuns:
    """Two runs of the bundled sample, made with `expvid eval` as a user would."""

    data: Path
    run_a: Path  # random, full frame cache kept in cache_a
    run_b: Path  # first-option, two Level-1 tasks, --no-cache (frames must be re-sampled)
    cache_a: Path


def expvid(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`expvid ...` in a child process (this checkout first on the path, whatever the caller's)."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["COLUMNS"] = "40"
    return subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
    )  # fmt: skip


def eval_process(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.Popen(
        [sys.executable, "-m", "expvid.cli.main", "eval", "--quiet", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


class LiveViewer(LiveServer):
    """The viewer app served by uvicorn on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self, session: ViewSession) -> None:
        super().__init__(create_app(session))
        self.session = session

    @property
    def url(self) -> str:
        return f"{super().url}/"


def snapshot(*roots: Path) -> dict[str, tuple[int, int, str]]:
    """Every file and directory under `roots`: size, mtime_ns and content hash (dirs: listing)."""
    seen: dict[str, tuple[int, int, str]] = {}
    for root in roots:
        for path in sorted([root, *root.rglob("*")]):
            stat = path.lstat()
            if path.is_dir():
                digest = hashlib.sha256(
                    "\n".join(sorted(p.name for p in path.iterdir())).encode()
                ).hexdigest()
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            seen[str(path)] = (stat.st_size, stat.st_mtime_ns, digest)
    return seen


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_WRITE_EVENTS = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.truncate", "os.utime", "os.chmod",
                 "os.chown", "os.link", "os.symlink", "shutil.rmtree", "shutil.move", "shutil.copyfile"}  # fmt: skip
_watch: list[tuple[tuple[str, ...], list[str]]] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _watch or (event != "open" and event not in _WRITE_EVENTS):
        return
    path = args[0] if args else None
    if not isinstance(path, str | bytes | os.PathLike):
        return
    text = os.path.abspath(os.fsdecode(path))
    if event == "open":
        mode, flags = args[1], args[2]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if not writes:
            return
    for roots, found in _watch:
        if any(text == root or text.startswith(root + os.sep) for root in roots):
            found.append(f"{event} {text} {args[1:3]!r}")


_hooked = False


@contextmanager
def no_writes_under(*roots: Path) -> Iterator[list[str]]:
    """Record every attempt of this process to open for writing, create, rename or remove anything
    under `roots` (a Python audit hook: it sees the viewer's own file calls, whatever library makes
    them). The caller asserts the list is empty."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    found: list[str] = []
    entry = (tuple(os.path.abspath(r) for r in roots), found)
    _watch.append(entry)
    try:
        yield found
    finally:
        _watch.remove(entry)


def new_page(browser: Any, errors: list[str], base_url: str | None = None) -> Any:
    """A page that records JavaScript and console errors (CSP violations land there) in `errors`."""
    context = browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: errors.append(f"console: {message.text}") if message.type == "error" else None,
    )
    return page
