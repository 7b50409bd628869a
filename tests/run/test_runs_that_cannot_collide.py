"""Runs that cannot collide or spin: one process per run directory, unreachable servers stop the run,
`openai:` without a key is refused up front, and `--out` must be a run or empty."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer

runner = CliRunner()

HOLD = """
import sys
from pathlib import Path
from expvid.run.run_lock import RunLock
RunLock(Path(sys.argv[1]), "expvid eval --out elsewhere").acquire()
print("held", flush=True)
sys.stdin.read()
"""


def _eval(sample_dir: Path, out: Path, cache: Path, model: str, *extra: str, env: dict | None = None):  # type: ignore[type-arg]
    args = ["eval", "--data", str(sample_dir), "--out", str(out), "--tasks", "tools", "--model", model,
            "--cache-dir", str(cache), "--quiet", "--frames", "L1=2", "--size", "32", "--concurrency", "2",
            *extra]  # fmt: skip
    return runner.invoke(app, args, env=env)


def test_a_second_process_is_refused_and_a_killed_ones_lock_is_taken_over(
    sample_dir, tmp_path, frame_cache_dir
):
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with LoopbackServer("\\boxed{A}") as server:
            model = f"openai:gpt-4o@{server.openai_base_url}"
            refused = _eval(sample_dir, out, frame_cache_dir, model)
            assert refused.exit_code == 2 and server.requests == []
            [line] = [line for line in refused.output.splitlines() if line.strip()]
            assert line.startswith(
                f"error: {out} is in use by pid {holder.pid} on {socket.gethostname()}, since "
            )
            assert "(expvid eval --out elsewhere)" in line
            os.kill(holder.pid, signal.SIGKILL)  # killed: its lock file still names it
            holder.wait()
            assert json.loads((out / ".lock").read_text())["pid"] == holder.pid
            done = _eval(sample_dir, out, frame_cache_dir, model)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert done.exit_code == 0, done.output
    assert f"took over the lock of {out} left by pid {holder.pid}" in " ".join(done.output.split())
    assert (out / ".lock").read_text() == ""  # released: it names no one


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_a_server_that_cannot_be_reached_trips_the_breaker(sample_dir, tmp_path, frame_cache_dir):
    out = tmp_path / "run"
    model = f"openai:gpt-4o@http://127.0.0.1:{_closed_port()}/v1"  # a wrong port: connection refused
    result = _eval(sample_dir, out, frame_cache_dir, model, "--max-retries", "0", "--stop-after-errors", "3")
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "stopped after 3 requests in a row failed with the same error" in message
    assert "cannot reach the server: ConnectError" in message
    lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert 3 <= len(lines) <= 5 and all(line["meta"]["unreachable"] for line in lines)


def test_a_failed_tls_handshake_counts_as_unreachable(sample_dir, tmp_path, frame_cache_dir):
    with LoopbackServer("\\boxed{A}") as server:  # plain HTTP: a TLS client hello fails there
        model = f"openai:gpt-4o@https://127.0.0.1:{server.port}/v1"
        result = _eval(sample_dir, tmp_path / "run", frame_cache_dir, model, "--max-retries", "0",
                       "--stop-after-errors", "2")  # fmt: skip
    assert result.exit_code == 2 and "cannot reach the server" in " ".join(result.output.split())


def test_openai_without_a_key_is_refused_up_front_unless_the_server_is_local(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = tmp_path / "run"
    refused = _eval(sample_dir, out, frame_cache_dir, "openai:gpt-4o")
    assert refused.exit_code == 2
    assert "environment variable OPENAI_API_KEY (holding the API key) is not set" in " ".join(
        refused.output.split()
    )
    assert not (out / "predictions.jsonl").exists()
    with LoopbackServer("\\boxed{A}") as server:  # a local server that needs no key: allowed
        local = _eval(sample_dir, out, frame_cache_dir, f"openai:gpt-4o@{server.openai_base_url}")
    assert local.exit_code == 0, local.output


def test_an_out_folder_that_is_not_a_run_is_refused(sample_dir, tmp_path, frame_cache_dir):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("\\section{Results}")
    result = _eval(sample_dir, out, frame_cache_dir, "random")
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"--out {out} is not empty and is not a run directory" in message and "chapter1.tex" in message
    assert sorted(p.name for p in out.iterdir()) == ["chapter1.tex"]  # nothing written into it
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _eval(sample_dir, empty, frame_cache_dir, "random").exit_code == 0
