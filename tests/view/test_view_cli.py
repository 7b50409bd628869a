"""`expvid view` as a user runs it: it prints a URL that serves, exports a file, and says what is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner
from view_support import SampleRuns, expvid

from expvid.cli.main import app


def test_view_prints_a_url_that_serves(sample_runs: SampleRuns) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"), COLUMNS="40")
    process = subprocess.Popen(
        [sys.executable, "-m", "expvid.cli.main", "view", str(sample_runs.run_a), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("expvid view: http://127.0.0.1:"), line + (
            process.stderr.read() if process.poll() else ""
        )
        url = line.split()[2]
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(url, timeout=30)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert page.status_code == 200 and "expvid view" in page.text
        assert httpx.get(url + "api/items", timeout=30).json()["runs"][0]["label"] == "random"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_export_writes_one_file(sample_runs: SampleRuns, tmp_path: Path) -> None:
    out = tmp_path / "view.html"
    done = expvid(
        "view", str(sample_runs.run_a), str(sample_runs.run_b), "--export", str(out), "--thumb-size", "64"
    )
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and out.stat().st_size > 10_000
    text = out.read_text()
    assert 'src="static/' not in text and "<script src" not in text  # nothing to fetch
    assert text.count("data:image/jpeg;base64,") > 10


def test_bad_input_is_a_clear_error(sample_runs: SampleRuns, tmp_path: Path) -> None:
    missing = expvid("view", str(tmp_path / "nope"), "--export", str(tmp_path / "x.html"))
    assert missing.returncode == 2 and "no such run directory" in " ".join(missing.stderr.split())
    inside = expvid(
        "view", str(sample_runs.run_a), "--export", str(sample_runs.run_a / "view.html"), "--no-frames"
    )
    assert inside.returncode == 2 and "inside a run directory" in " ".join(inside.stderr.split())
    assert not (sample_runs.run_a / "view.html").exists()
    listed = CliRunner().invoke(app, ["view", "--help"])
    assert listed.exit_code == 0 and "--export" in listed.output
