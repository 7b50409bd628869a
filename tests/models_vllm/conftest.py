"""Fixtures for the managed vLLM server: a stand-in `vllm` executable and helpers to watch processes."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

FAKE = Path(__file__).parent / "fake_vllm.py"


@pytest.fixture
def fake_vllm() -> str:
    """The stand-in as a `vllm_executable` command line (behaviour chosen with FAKE_VLLM_* variables)."""
    return shlex.join([sys.executable, str(FAKE)])


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], dict]:
    """Makes the stand-in write what it was started with; call the fixture's value to read it."""
    path = tmp_path / "fake_vllm_record.json"
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(path))

    def read() -> dict:
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return json.loads(path.read_text())

    return read


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """A checkpoint folder (the stand-in only needs its name)."""
    folder = tmp_path / "Qwen2.5-VL-7B-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
    return folder


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return status != "Z"


@pytest.fixture
def alive() -> Callable[[int], bool]:
    return pid_alive


@pytest.fixture
def wait_dead() -> Callable[[int, float], bool]:
    def wait(pid: int, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        return not pid_alive(pid)

    return wait
