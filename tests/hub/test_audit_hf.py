"""`expvid audit --data hf:ORG/NAME`: the release is fetched into the cache as `expvid eval` fetches it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.hub import LoopbackHub
from expvid.suites.registry import get_suite


def test_audit_reads_an_hf_release(
    hub: LoopbackHub, expvid_repo: str, sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    args = ["audit", "--data", "hf:OpenGVLab/ExpVid", "--tasks", "tools", "--out", str(tmp_path / "a")]
    result = CliRunner().invoke(
        app, [*args, "--cache-dir", str(tmp_path / "cache"), "--no-embeddings", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "a" / "audit.json").read_text())
    tools = [
        item.id for item in get_suite("expvid").load(sample_dir, tasks=["tools"]) if item.task == "tools"
    ]
    assert report["suite"] == "expvid" and report["data"] == "hf:OpenGVLab/ExpVid"
    assert [item["id"] for item in report["items"]] == tools
    assert (tmp_path / "cache" / "datasets" / "OpenGVLab--ExpVid" / "main" / "annotations").is_dir()
