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

from build_helpers import bodies, run_build, subset
from build_responder import ScriptedLab

from expvid.models.loopback import LoopbackServer, RecordedRequest, Reply

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
