"""One process per run directory: `RUN_DIR/.lock`, and refusing an `--out` that is not a run.

Two `expvid eval` processes on the same run directory would ask the same items twice and append
to the same files. The first takes an exclusive `flock` on `RUN_DIR/.lock` for as long as it runs
and writes who it is into it (process id, host, start time, command). A second process cannot take
the lock and refuses in one line naming the holder.

The kernel releases a `flock` when its process dies however it dies (SIGKILL included), so a lock
left by a killed process is taken over: the file still names it, the new holder says so. A file
naming a process that is still alive on this host (same id and start time) is refused even if its
lock could be taken (a file system without locks); on another host the lock is trusted.

`--out` must be new, empty, or a run directory (a manifest, or only the files a run writes before
its manifest): a folder of something else would otherwise be written into and mistaken for a run.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from expvid.schema import DataError
from expvid.schema.records import utc_now

LOCK_FILE = ".lock"
#: What a run directory may hold before its manifest is written (a run killed at its very start).
RUN_ENTRIES = frozenset(
    {
        LOCK_FILE,
        "manifest.json",
        "predictions.jsonl",
        "judgments.jsonl",
        "item_scores.jsonl",
        "scores.json",
        "batches",
        "logs",
    }
)


class RunLocked(DataError):
    """Another process holds the run directory."""


def process_start(pid: int) -> str | None:
    """When process `pid` started, as the kernel says (`/proc/PID/stat` field 22, clock ticks since
    boot): with the pid it names one process, even after the pid is reused. None where unknown."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def alive(pid: int, started: str | None) -> bool:
    """Whether the process `pid` (that started at `started`, when known) still runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    now = process_start(pid)
    return started is None or now is None or now == started


def check_out_folder(out: Path) -> None:
    """Refuse an `--out` that is neither new, nor empty, nor a run directory."""
    if not out.exists():
        return
    if not out.is_dir():
        raise DataError(
            f"--out {out} is a file, not a folder: give a new or empty folder, or a run directory"
        )
    if (out / "manifest.json").is_file():
        return
    others = sorted(entry.name for entry in out.iterdir() if entry.name not in RUN_ENTRIES)
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise DataError(
            f"--out {out} is not empty and is not a run directory (no manifest.json; it holds {shown}): "
            "give a new or empty folder, or the run directory to resume"
        )


@dataclass
class Holder:
    pid: int
    host: str
    started_at: str
    process_start: str | None = None
    command: str = ""

    def describe(self) -> str:
        command = f" ({self.command})" if self.command else ""
        return f"pid {self.pid} on {self.host}, since {self.started_at}{command}"


def _read_holder(path: Path) -> Holder | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return Holder(
            pid=int(data["pid"]),
            host=str(data["host"]),
            started_at=str(data.get("started_at", "")),
            process_start=data.get("process_start"),
            command=str(data.get("command", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


class RunLock:
    """`with RunLock(run_dir, command):` holds the run directory for this process."""

    def __init__(self, root: Path, command: str = "") -> None:
        self.root = root
        self.path = root / LOCK_FILE
        self.command = command[:200]
        self._fd: int | None = None
        self._made_root = False
        #: The killed process whose lock was taken over, when there was one.
        self.took_over: Holder | None = None

    def acquire(self) -> RunLock:
        self._made_root = not self.root.exists()
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _read_holder(self.path)
            who = holder.describe() if holder is not None else "another process"
            raise RunLocked(f"{self.root} is in use by {who}; wait for it to finish or stop it") from None
        previous = _read_holder(self.path)
        me = socket.gethostname()
        if previous is not None and previous.pid != os.getpid():
            if previous.host == me and alive(previous.pid, previous.process_start):
                os.close(fd)
                raise RunLocked(
                    f"{self.root} is in use by {previous.describe()} (its lock file could be taken: "
                    "does this file system support locks?); wait for it to finish or stop it"
                )
            self.took_over = previous
        mine = {
            "pid": os.getpid(),
            "host": me,
            "started_at": utc_now().isoformat(),
            "process_start": process_start(os.getpid()),
            "command": self.command,
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(mine) + "\n").encode("utf-8"), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)  # a free lock names no one (the file stays: others may wait on it)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
        if self._made_root and [entry.name for entry in self.root.iterdir()] == [LOCK_FILE]:
            with contextlib.suppress(OSError):  # refused before any work: leave nothing behind
                self.path.unlink()
                self.root.rmdir()

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
