"""Crash and resume: `expvid build` killed with SIGKILL in the middle, then run again.

The first run is a real `expvid build` process. Once the loopback server has answered a number of
requests it stops answering (replies are held back), and the test kills the process while it waits.
The re-run must not send again any request the first run got an answer to (the response cache and
the stage state carry them over), must finish, and must write the same candidates as a build that
never crashed. A third run has nothing left to ask.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from build_helpers import bodies, run_build, subset
from build_responder import ScriptedLab

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply

VIDEOS = ["61842", "66708"]
ANSWERED_BEFORE_STALL = 120


class StallAfter:
    """Answers like the lab for the first N requests, then holds every reply back (a hung server)."""

    def __init__(self, lab: ScriptedLab, answered: int) -> None:
        self.lab = lab
        self.answered = answered
        self.count = 0
        self.stalled = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply | str:
        with self.lock:
            self.count += 1
            stall = self.count > self.answered
        if stall:
            self.stalled.set()
            return Reply(text="", delay_s=120.0)
        return self.lab(request)


def _annotations(out):
    return {
        p.relative_to(out).as_posix(): p.read_text() for p in sorted((out / "annotations").rglob("*.jsonl"))
    }


def test_a_killed_build_resumes_without_repeating_answered_calls(sample_sources, tmp_path):
    sources = subset(sample_sources, tmp_path / "sources", VIDEOS)
    out = tmp_path / "out"
    responder = StallAfter(ScriptedLab(), ANSWERED_BEFORE_STALL)
    with LoopbackServer(responder) as server:
        command = [
            sys.executable, "-m", "expvid.cli.main", "build", str(sources), "--out", str(out),
            "--llm", f"openai:deepseek-r1@{server.openai_base_url}", "--min-duration", "60",
            "--max-duration", "900", "--trim-slides", "--preset", "ultrafast", "--no-asr-audit",
            "--blind-samples", "1", "--max-retries", "0", "--quiet",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert responder.stalled.wait(timeout=120), process.communicate(timeout=5)[0].decode()
            time.sleep(1.0)  # let the answered replies reach the process's cache
            assert process.poll() is None
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=30)
        first = bodies(server)
        answered = set(first[:ANSWERED_BEFORE_STALL])
        assert not (out / "build_report.json").exists()  # it really died mid-way

        server.reset(ScriptedLab())
        report = run_build(sources, out, server, blind_samples=1)
        second = bodies(server)
        assert second and not answered & set(second)
        assert report["calls"]["sent"] == len(second)
        assert report["calls"]["cache_hits"] >= ANSWERED_BEFORE_STALL - 10  # stage state holds the rest

        server.reset()
        again = run_build(sources, out, server, blind_samples=1)
        assert bodies(server) == [] and again["calls"]["sent"] == 0
        assert again["stages"]["computed"] == 0 and again["stages"]["clips_cut"] == 0
        # The killed run never finished, so two runs are on record, and their spending adds up.
        assert again["cost"]["runs"] == 2 and again["calls"]["sent_all_runs"] == len(second)
        assert again["cost"]["all_runs"] == report["cost"]["all_runs"] == report["cost"]["this_run"]

        fresh = run_build(sources, tmp_path / "fresh", server, blind_samples=1)
    assert _annotations(out) == _annotations(tmp_path / "fresh")
    assert report["total_items"] == fresh["total_items"] > 0


def _children(pid: int) -> set[int]:
    """Every process below `pid` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_kill_9_of_a_build_leaves_no_clip_worker_or_helper_running(sample_sources, tmp_path):
    sources = subset(sample_sources, tmp_path / "sources", VIDEOS)
    responder = StallAfter(ScriptedLab(), 40)  # past curation: the clip workers are started
    with LoopbackServer(responder) as server:
        command = [
            sys.executable, "-m", "expvid.cli.main", "build", str(sources), "--out", str(tmp_path / "out"),
            "--llm", f"openai:deepseek-r1@{server.openai_base_url}", "--min-duration", "60",
            "--max-duration", "900", "--preset", "ultrafast", "--blind-samples", "0", "--max-retries", "0",
            "--jobs", "2", "--quiet",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert responder.stalled.wait(timeout=120), process.communicate(timeout=5)[0].decode()
            deadline = time.monotonic() + 60
            while len(_children(process.pid)) < 3 and time.monotonic() < deadline:  # 2 workers + tracker
                time.sleep(0.2)
            helpers = _children(process.pid)
            assert len(helpers) >= 3, helpers
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in helpers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in helpers if _alive(pid)]
