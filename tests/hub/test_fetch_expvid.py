"""`expvid data fetch expvid` against a loopback Hub: selection, pinning, missing files, resuming."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.hub import LoopbackHub
from expvid.hub.fetch import FetchError, FetchRequest, fetch_release
from expvid.hub.record import read_fetch_record
from expvid.suites.expvid_suite import load_expvid

runner = CliRunner()
REPO = "OpenGVLab/ExpVid"


def _fetch(hub: LoopbackHub, out: Path, **kwargs: object):
    return fetch_release(FetchRequest(suite="expvid", out=out, endpoint=hub.url, progress=False, **kwargs))


def _content_gets(hub: LoopbackHub) -> list[str]:
    """Repo files whose bytes were served (CDN or resolve GETs)."""
    return [r.path.split("#", 1)[1] for r in hub.requests if r.method == "GET" and "#" in r.path]


def test_one_task_downloads_only_its_annotations_and_clips_and_records_the_commit(
    hub, expvid_repo, sample_dir, tmp_path
):
    outcome = _fetch(hub, tmp_path / "data", tasks=["tools"])
    served = _content_gets(hub)
    tools = load_expvid(sample_dir, tasks=["tools"])
    expected_clips = {item.media.source_path for item in tools}  # type: ignore[union-attr]
    assert set(served) == {"annotations/level1/tools.jsonl", "README.md", *expected_clips}
    assert len(served) == len(set(served))  # nothing twice
    record = read_fetch_record(tmp_path / "data")
    assert record is not None and record.revision == expvid_repo and record.revision_requested == "main"
    assert record.tasks == ["tools"] and record.license == "cc-by-nc-4.0"
    assert record.verification.complete and record.verification.items == len(tools)
    assert record.verification.media_readable == len(expected_clips) and record.verification.probed
    fetched = load_expvid(tmp_path / "data", tasks=["tools"])
    assert fetched.fingerprint() == tools.fingerprint() == record.fingerprint
    assert outcome.complete and not (tmp_path / "data" / "videos" / "level_3").exists()


def test_a_second_selection_adds_its_files_and_keeps_the_first(hub, expvid_repo, tmp_path):
    _fetch(hub, tmp_path / "data", tasks=["tools"])
    hub.reset_requests()
    outcome = _fetch(hub, tmp_path / "data", levels=[3])
    served = _content_gets(hub)
    assert all(p.startswith(("annotations/level3/", "videos/level_3/")) for p in served), served
    assert outcome.record.tasks == ["tools", "experimental_conclusion", "scientific_discovery"]
    assert outcome.complete


def test_revision_pin_reads_the_tagged_commit_not_main(hub, sample_dir, tmp_path, release_files):
    first = hub.commit(REPO, release_files(sample_dir))
    hub.tag(REPO, "v1.0", first)
    tools = (sample_dir / "annotations/level1/tools.jsonl").read_text(encoding="utf-8").splitlines()
    edited = json.loads(tools[0])
    edited["question"] = "EDITED " + edited["question"]
    second = hub.commit(
        REPO, {"annotations/level1/tools.jsonl": "\n".join([json.dumps(edited), *tools[1:]]).encode()}
    )
    assert first != second

    pinned = _fetch(hub, tmp_path / "v1", tasks=["tools"], revision="v1.0")
    latest = _fetch(hub, tmp_path / "main", tasks=["tools"])
    assert pinned.record.revision == first and latest.record.revision == second
    assert "EDITED" not in (tmp_path / "v1/annotations/level1/tools.jsonl").read_text(encoding="utf-8")
    assert "EDITED" in (tmp_path / "main/annotations/level1/tools.jsonl").read_text(encoding="utf-8")
    assert pinned.record.fingerprint != latest.record.fingerprint
    by_sha = _fetch(hub, tmp_path / "sha", tasks=["tools"], revision=first)
    assert by_sha.record.revision == first and by_sha.record.fingerprint == pinned.record.fingerprint


def test_unknown_revision_and_unknown_repo_are_clear_errors(hub, expvid_repo, tmp_path):
    with pytest.raises(FetchError, match="no revision 'v9'"):
        _fetch(hub, tmp_path / "x", tasks=["tools"], revision="v9")
    with pytest.raises(FetchError, match="no dataset someone/else"):
        _fetch(hub, tmp_path / "y", tasks=["tools"], repo_id="someone/else")


def test_missing_video_is_reported_by_item_and_path_and_the_rest_is_kept(
    hub, sample_dir, tmp_path, release_files
):
    files = release_files(sample_dir)
    gone = "videos/level_2/step_prediction/61842/" + next(
        p.name for p in (sample_dir / "videos/level_2/step_prediction/61842").iterdir()
    )
    del files[gone]
    hub.commit(REPO, files)
    result = runner.invoke(
        app,
        [
            "data",
            "fetch",
            "expvid",
            str(tmp_path / "data"),
            "--tasks",
            "step_prediction",
            "--endpoint",
            hub.url,
            "--quiet",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "is not in the repository at this revision" in result.output and gone in result.output
    assert f"{gone}: missing" in result.output  # and the check of the item's media on disk
    record = read_fetch_record(tmp_path / "data")
    assert record is not None and not record.verification.complete and record.verification.n_problems == 2
    kept = [p for p in (tmp_path / "data/videos/level_2/step_prediction").rglob("*.mp4")]
    assert len(kept) == record.verification.items - 1 == record.verification.media_readable


def test_interrupted_fetch_resumes_without_downloading_finished_files(hub, expvid_repo, sample_dir, tmp_path):
    clips = sorted(item.media.source_path for item in load_expvid(sample_dir, tasks=["materials"]))  # type: ignore[union-attr]
    broken = clips[len(clips) // 2]
    hub.fail(broken, status=500, times=100)  # the CDN keeps failing this file: the first run must stop
    with pytest.raises(FetchError, match="re-run the same command to resume"):
        _fetch(hub, tmp_path / "data", tasks=["materials"], max_workers=1)
    first_run = _content_gets(hub)
    assert broken in first_run and any(c in first_run for c in clips if c != broken)
    assert read_fetch_record(tmp_path / "data") is None  # no record claims a complete download

    hub.clear_faults()
    hub.reset_requests()
    outcome = _fetch(hub, tmp_path / "data", tasks=["materials"])
    second_run = _content_gets(hub)
    finished_before = {c for c in clips if c in first_run and c != broken}
    assert broken in second_run and not finished_before & set(second_run), second_run
    assert outcome.complete and outcome.record.verification.media_readable == len(clips)


def test_connection_dropped_mid_file_is_resumed_with_a_range_request(
    hub, sample_dir, tmp_path, release_files, noise_video
):
    files = release_files(sample_dir)
    big = noise_video(tmp_path / "big.mp4")  # > 10 MiB: huggingface_hub writes 10 MiB chunks
    files["videos/level_3/61842_.mp4"] = big
    hub.commit(REPO, files)
    hub.drop_once("videos/level_3/61842_.mp4", after_bytes=big.stat().st_size - 1_000_000)
    outcome = _fetch(hub, tmp_path / "data", tasks=["experimental_conclusion"])
    gets = [r for r in hub.requests if r.method == "GET" and r.path.endswith("#videos/level_3/61842_.mp4")]
    assert len(gets) == 2 and gets[0].range is None
    assert gets[1].range == "bytes=10485760-" and gets[1].status == 206  # only the rest was asked for
    assert (tmp_path / "data/videos/level_3/61842_.mp4").read_bytes() == big.read_bytes()
    assert outcome.complete


def test_killed_command_resumes_through_hf_endpoint(hub, sample_dir, tmp_path, release_files, noise_video):
    """The real CLI in a child process, pointed at the Hub by HF_ENDPOINT, killed mid-file, re-run."""
    files = release_files(sample_dir)
    slow = "videos/level_3/62517_.mp4"
    files[slow] = noise_video(tmp_path / "slow.mp4", seconds=1.0)
    hub.commit(REPO, files)
    hub.throttle(slow, chunk=64 * 1024, delay_s=0.05)
    env = {**os.environ, "HF_ENDPOINT": hub.url, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = tmp_path / "data"
    command = [
        sys.executable,
        "-m",
        "expvid.cli.main",
        "data",
        "fetch",
        "expvid",
        str(out),
        "--levels",
        "3",
        "--quiet",
    ]
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while hub.bytes_sent(slow) < 256 * 1024:
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()[0]
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert not (out / slow).exists() and read_fetch_record(out) is None
    finished = [p for p in (out / "videos/level_3").glob("*.mp4")]
    hub.clear_faults()
    hub.reset_requests()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    served = _content_gets(hub)
    assert slow in served and not {f"videos/level_3/{p.name}" for p in finished} & set(served)
    record = read_fetch_record(out)
    assert record is not None and record.verification.complete and record.source.endpoint == hub.url


def test_a_truncated_file_on_disk_is_downloaded_again(hub, expvid_repo, sample_dir, tmp_path):
    _fetch(hub, tmp_path / "data", tasks=["quantity"])
    clip = next((tmp_path / "data/videos/level_1").rglob("*.mp4"))
    whole = clip.read_bytes()
    clip.write_bytes(whole[: len(whole) // 2])  # an interrupted copy, recorded by huggingface_hub as done
    hub.reset_requests()
    outcome = _fetch(hub, tmp_path / "data", tasks=["quantity"])
    assert _content_gets(hub) == [clip.relative_to(tmp_path / "data").as_posix()]
    assert clip.read_bytes() == whole and outcome.complete


def test_gated_repo_says_how_to_get_access(hub, sample_dir, tmp_path, monkeypatch, release_files):
    hub.commit(REPO, release_files(sample_dir), gated_token="hf_secret")
    with pytest.raises(FetchError, match=r"gated: accept its conditions .* set HF_TOKEN"):
        _fetch(hub, tmp_path / "data", tasks=["tools"])
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    outcome = _fetch(hub, tmp_path / "data", tasks=["tools"])
    assert outcome.complete
    cdn = [r for r in hub.requests if r.path.startswith("/cdn")]
    assert cdn and all(r.authorization is None for r in cdn)  # the token never leaves the Hub host


def test_eval_with_hf_data_fetches_into_the_cache_and_records_the_revision(
    hub, expvid_repo, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    cache = tmp_path / "cache"
    args = ["eval", "--data", f"hf:{REPO}", "--model", "first-option", "--tasks", "tools", "--limit", "3"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), "--cache-dir", str(cache), "--quiet"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    source = manifest["config"]["data_source"]
    assert source["repo"] == REPO and source["revision"] == expvid_repo and source["complete"] is True
    local = cache / "datasets" / "OpenGVLab--ExpVid" / "main"
    assert manifest["dataset_root"] == str(local) and manifest["dataset_fingerprint"] == source["fingerprint"]
    hub.reset_requests()
    again = runner.invoke(app, [*args, "--out", str(tmp_path / "run2"), "--cache-dir", str(cache), "--quiet"])
    assert again.exit_code == 0, again.output
    assert _content_gets(hub) == []  # the cached copy is complete at the same commit: nothing downloaded


def test_hf_data_of_another_suite_needs_that_suite(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    args = ["eval", "--data", "hf:groundmore/scivideobench", "--suite", "expvid", "--model", "random"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 2 and "use --suite scivideobench" in " ".join(result.output.split())


def test_fetch_copy_can_be_moved(hub, expvid_repo, tmp_path):
    _fetch(hub, tmp_path / "data", tasks=["tools"])
    shutil.move(tmp_path / "data", tmp_path / "moved")
    record = read_fetch_record(tmp_path / "moved")
    assert (
        record is not None
        and load_expvid(tmp_path / "moved", tasks=["tools"]).fingerprint() == record.fingerprint
    )


def test_scattered_selections_are_fetched_file_by_file_with_the_same_resume(
    hub, expvid_repo, sample_dir, tmp_path, monkeypatch
):
    """Past MAX_PATTERNS the clips are fetched one by one (snapshot_download's filter is files x patterns)."""
    from expvid.hub import fetch as fetch_module

    monkeypatch.setattr(fetch_module, "MAX_PATTERNS", 2)
    clips = sorted(item.media.source_path for item in load_expvid(sample_dir, tasks=["operation"]))  # type: ignore[union-attr]
    hub.fail(clips[0], status=500, times=100)
    with pytest.raises(FetchError, match="re-run the same command"):
        _fetch(hub, tmp_path / "data", tasks=["operation"])
    assert set(clips[1:]) <= set(_content_gets(hub))  # a failure does not stop the other files
    hub.clear_faults()
    hub.reset_requests()
    outcome = _fetch(hub, tmp_path / "data", tasks=["operation"])
    assert _content_gets(hub) == [clips[0]] and outcome.complete


def test_offline_mode_is_named_instead_of_a_network_error(hub, expvid_repo, tmp_path):
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    command = [
        sys.executable,
        "-m",
        "expvid.cli.main",
        "data",
        "fetch",
        "expvid",
        str(tmp_path / "d"),
        "--quiet",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    message = " ".join(done.stderr.split())
    assert done.returncode == 2 and "HF_HUB_OFFLINE is set" in message and "holds no earlier fetch" in message
