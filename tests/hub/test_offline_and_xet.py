"""Cluster compute nodes: `HF_HUB_OFFLINE=1` with a cache a login node filled. And what the Hub's Xet
storage means for fetching (see docs/hub.md, "Xet").

The loopback Hub is stopped before the offline runs: any request would fail to connect, so a run
that works proves nothing was asked of the Hub.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.hub import LoopbackHub

runner = CliRunner()
REPO = "OpenGVLab/ExpVid"


def test_offline_runs_use_the_cached_release_and_say_so(
    hub: LoopbackHub, expvid_repo: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    cache, data = tmp_path / "cache", tmp_path / "data"
    args = ["eval", "--data", f"hf:{REPO}", "--model", "first-option", "--tasks", "tools", "--limit", "3",
            "--cache-dir", str(cache), "--quiet"]  # fmt: skip
    assert runner.invoke(app, [*args, "--out", str(tmp_path / "login")]).exit_code == 0  # the login node
    fetched = runner.invoke(app, ["data", "fetch", "expvid", str(data), "--tasks", "tools", "--quiet"])
    assert fetched.exit_code == 0, fetched.output
    hub.stop()  # the compute node: no network

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "compute")])
    assert result.exit_code == 0, result.output
    source = json.loads((tmp_path / "compute" / "manifest.json").read_text())["config"]["data_source"]
    assert source["revision"] == expvid_repo and source["resolved_from"] == "cache"
    assert source["resolved_at"] is not None and source["complete"] is True

    again = runner.invoke(app, ["data", "fetch", "expvid", str(data), "--tasks", "tools", "--quiet"])
    assert again.exit_code == 0, again.output
    record = json.loads((data / "fetch.json").read_text())
    assert record["resolved_from"] == "cache" and record["revision"] == expvid_repo
    assert record["verification"]["complete"] is True

    more = runner.invoke(app, ["data", "fetch", "expvid", str(data), "--tasks", "tools,materials", "--quiet"])
    assert more.exit_code == 2
    message = " ".join(more.output.split())
    assert "HF_HUB_OFFLINE is set" in message and "without materials" in message
    empty = runner.invoke(
        app, ["data", "fetch", "expvid", str(tmp_path / "empty"), "--tasks", "tools", "--quiet"]
    )
    assert empty.exit_code == 2 and "holds no earlier fetch" in " ".join(empty.output.split())


def test_xet_backed_files_download_over_https_with_xet_disabled_and_a_failing_xet_path_says_what_to_do(
    sample_dir: Path, release_files, tmp_path: Path, monkeypatch
) -> None:
    """The Hub announces Xet storage for large files (tree `xetHash`, resolve `X-Xet-Hash` and an
    `xet-auth` link). The loopback serves that metadata and the token route, not the CAS protocol."""
    from huggingface_hub import constants

    from expvid.hub.fetch import FetchError, FetchRequest, fetch_release

    with LoopbackHub(xet=True) as hub:
        hub.commit(REPO, release_files(sample_dir))
        request = {"suite": "expvid", "endpoint": hub.url, "progress": False, "tasks": ["tools"]}

        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)  # what HF_HUB_DISABLE_XET=1 sets at import
        outcome = fetch_release(FetchRequest(out=tmp_path / "https", **request))  # type: ignore[arg-type]
        assert outcome.complete and outcome.record.verification.media_readable > 0
        assert not [r for r in hub.requests if "xet-read-token" in r.path]

        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)  # hf_xet (a dependency) takes over
        hub.reset_requests()
        try:
            fetch_release(FetchRequest(out=tmp_path / "xet", **request))  # type: ignore[arg-type]
        except FetchError as error:
            message = str(error)
        else:
            raise AssertionError("the Xet path cannot succeed against the loopback CAS")
        assert (
            message.startswith("downloading through Xet storage failed") and "HF_HUB_DISABLE_XET=1" in message
        )
        tokens = [r for r in hub.requests if "xet-read-token" in r.path]
        reconstructions = [
            r for r in hub.requests if r.path.startswith("/cas/") and "reconstructions" in r.path
        ]
        assert tokens and reconstructions  # the real client took the Xet route: token, then the CAS
        assert (tmp_path / "xet" / "annotations/level1/tools.jsonl").is_file()  # small files: plain HTTPS
