"""`vllm serve` as a managed subprocess: start it, wait until it answers, log it, and always stop it.

What can go wrong with a model server started by an evaluation, and what this does about it:

- the port is taken: a free one is picked when none is given; a given port already in use is refused
  before starting (otherwise the health check could find someone else's server and call it ours);
- loading takes minutes: readiness is `GET /health` answering 200 and `GET /v1/models` listing the
  served name, polled until `startup_timeout_s`;
- the server dies while loading (bad path, out of memory, unsupported model): the wait notices the
  exit at once and the error carries the last lines of the log, which hold the real reason;
- the evaluation ends, fails or is interrupted (Ctrl-C): `stop()` runs from the backend's
  `aclose()`, from the start-up wait's own exception handler, and at interpreter exit. It sends
  SIGTERM to the server's whole process group (vLLM runs engine and tensor-parallel workers as
  child processes), waits `shutdown_grace_s`, then SIGKILLs whatever is left of the group.

The server runs in its own session, so a Ctrl-C in the terminal reaches expvid only and the
shutdown happens in order. stdout and stderr go to one log file (the run directory's `logs/` when
the runner passes `log_dir`). POSIX only (process groups).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import httpx2

from expvid.models.local_server import LocalServer
from expvid.models.options import BackendOptions
from expvid.models.types import BackendConfigError

LOG_FILE_NAME = "vllm-serve.log"


class VLLMStartError(BackendConfigError):
    """The server exited, or never became ready, during start-up. The message holds the log's tail."""


_live: set[VLLMServer] = set()
_live_lock = threading.Lock()


@atexit.register
def _stop_all() -> None:
    """Interpreter exit: no server started by this process outlives it."""
    with _live_lock:
        servers = list(_live)
    for server in servers:
        server.stop()


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def resolve_executable(executable: str) -> list[str]:
    """`vllm`, `/opt/venv/bin/vllm` or a command line such as `python -m vllm.entrypoints.cli.main`."""
    argv = shlex.split(executable)
    if not argv:
        raise BackendConfigError("vllm_executable is empty")
    found = shutil.which(argv[0])
    if found is None:
        raise BackendConfigError(
            f"cannot run {argv[0]!r}: vLLM is not installed here (pip install vllm) or not on PATH; "
            "pass vllm_executable=/path/to/vllm, or serve the model yourself and use openai:MODEL@URL"
        )
    return [found, *argv[1:]]


#: The backend options a managed server takes under the same names (`VLLMServer.from_options`).
SERVER_OPTIONS = frozenset(
    {
        "host",
        "port",
        "tensor_parallel_size",
        "served_model_name",
        "log_dir",
        "startup_timeout_s",
        "shutdown_grace_s",
    }
)


class VLLMServer(LocalServer):
    """One `vllm serve MODEL` process. Use as a context manager, or start() / stop()."""

    def __init__(
        self,
        model: str,
        *,
        executable: str = "vllm",
        host: str = "127.0.0.1",
        port: int | None = None,
        tensor_parallel_size: int = 1,
        served_model_name: str | None = None,
        extra_args: Sequence[str] = (),
        log_dir: Path | None = None,
        startup_timeout_s: float = 1800.0,
        shutdown_grace_s: float = 30.0,
        poll_interval_s: float = 0.25,
        env: dict[str, str] | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model = model
        self.executable = resolve_executable(executable)
        self.host = host
        self.requested_port = port
        self.port = port or 0
        self.tensor_parallel_size = tensor_parallel_size
        self.served_model_name = served_model_name or Path(model.rstrip("/")).name or model
        self.extra_args = list(extra_args)
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.log_path: Path | None = None
        self.startup_timeout_s = startup_timeout_s
        self.shutdown_grace_s = shutdown_grace_s
        self.poll_interval_s = poll_interval_s
        self.env = dict(env or {})
        if api_key is not None:  # vLLM reads it from the environment: it never shows in `ps`
            self.env["VLLM_API_KEY"] = api_key
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None
        self._log: IO[bytes] | None = None
        self._stop_lock = threading.Lock()

    @classmethod
    def from_options(
        cls, model: str, options: BackendOptions, *, extra_args: Sequence[str], api_key: str | None
    ) -> VLLMServer:
        """The server a `vllm:` backend's options describe (`SERVER_OPTIONS`, and `vllm_executable`)."""
        settings = options.model_dump(include=set(SERVER_OPTIONS))
        return cls(
            model, executable=options.vllm_executable, extra_args=extra_args, api_key=api_key, **settings
        )

    # -- what it runs and where ---------------------------------------------------------------

    @property
    def command(self) -> list[str]:
        return [
            *self.executable,
            "serve",
            self.model,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--served-model-name",
            self.served_model_name,
            "--tensor-parallel-size",
            str(self.tensor_parallel_size),
            *self.extra_args,
        ]

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root."""
        return f"{self.url}/v1"

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.is_file():
            return "(no log)"
        with self.log_path.open("rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(max(0, file.tell() - 64 * 1024))
            text = file.read().decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> VLLMServer:
        if self.process is not None:
            raise RuntimeError("vllm server already started")
        if self.requested_port is None:
            self.port = free_port(self.host)
        elif port_in_use(self.host, self.requested_port):
            raise BackendConfigError(
                f"port {self.requested_port} on {self.host} is already in use; choose another port "
                "or leave it unset to pick a free one"
            )
        directory = self.log_dir or Path(tempfile.mkdtemp(prefix="expvid-vllm-"))
        directory.mkdir(parents=True, exist_ok=True)
        self.log_path = directory / LOG_FILE_NAME
        self._log = self.log_path.open("ab")
        self._log.write(
            f"# expvid: {time.strftime('%Y-%m-%dT%H:%M:%S')} {shlex.join(self.command)}\n".encode()
        )
        self._log.flush()
        started = time.monotonic()
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: stop() can reach every worker
                env={**os.environ, **self.env} if self.env else None,
            )
        except OSError as error:
            self._close_log()
            raise BackendConfigError(f"cannot start {shlex.join(self.command)}: {error}") from None
        with _live_lock:
            _live.add(self)
        try:
            self.wait_ready()
        except BaseException:  # start-up failed or was interrupted (Ctrl-C): leave nothing behind
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx2.Client(timeout=5.0, headers=self._headers) as client:
            while True:
                code = self.returncode
                if code is not None:
                    raise VLLMStartError(
                        f"vllm serve exited with code {code} while starting ({self.model}); "
                        f"last lines of {self.log_path}:\n{self.log_tail()}"
                    )
                if self._ready(client):
                    return
                if time.monotonic() > deadline:
                    raise VLLMStartError(
                        f"vllm serve did not become ready within {self.startup_timeout_s:g} s "
                        f"({self.model}); last lines of {self.log_path}:\n{self.log_tail()}"
                    )
                time.sleep(self.poll_interval_s)

    def _ready(self, client: httpx2.Client) -> bool:
        try:
            health = client.get(f"{self.url}/health")
            if health.status_code != 200:
                return False
            models = client.get(f"{self.base_url}/models")
        except httpx2.HTTPError:
            return False
        if models.status_code != 200:
            return False
        try:
            served = {entry.get("id") for entry in models.json().get("data", [])}
        except (ValueError, AttributeError):
            return False
        return self.served_model_name in served

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL after the grace period. Safe to call twice."""
        with self._stop_lock:
            process = self.process
            if process is not None:
                _signal_group(process.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=self.shutdown_grace_s)
                # Stragglers (workers that ignored SIGTERM, or a leader that would not exit) go now.
                _signal_group(process.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=10)
            with _live_lock:
                _live.discard(self)
            self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
