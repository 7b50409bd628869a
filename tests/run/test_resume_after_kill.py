"""Killing a real `expvid eval` process with SIGKILL mid-run loses nothing and asks nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from expvid.fakes.models.server import LoopbackServer, Reply


def _command(sample_dir: Path, server: LoopbackServer, out: Path, cache: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "expvid.cli.main",
        "eval",
        "--data",
        str(sample_dir),
        "--model",
        f"openai:loopback@{server.openai_base_url}",
        "--out",
        str(out),
        "--tasks",
        "tools,materials",
        "--concurrency",
        "4",
        "--cache-dir",
        str(cache),
        "--quiet",
    ]


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_sigkill_then_resume_has_every_item_exactly_once(sample_dir, tmp_path, frame_cache_dir):
    out = tmp_path / "run"
    predictions = out / "predictions.jsonl"
    with LoopbackServer(Reply.slow("\\boxed{A}", 0.25)) as server:
        command = _command(sample_dir, server, out, frame_cache_dir)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(_lines(predictions)) < 8:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "the run never got going"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        killed_at = len(_lines(predictions))
        asked_before = len(server.requests)
        assert 8 <= killed_at < 36, "the kill should land mid-run"

        resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr

        lines = _lines(predictions)
        ids = [json.loads(line)["item_id"] for line in lines]
        assert len(ids) == 36 == len(set(ids)), "every item exactly once"
        assert all(json.loads(line)["error"] is None for line in lines)
        # Requests in flight when the process died (at most --concurrency) are the only ones that may
        # be asked again; everything already written is reused.
        in_flight = asked_before - killed_at
        assert 0 <= in_flight <= 4
        assert len(server.requests) <= asked_before + (36 - killed_at)
    assert (out / "scores.json").is_file()
