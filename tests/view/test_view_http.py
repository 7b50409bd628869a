"""The viewer over real HTTP: what it serves, what it refuses, and that it writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest
from view_support import LiveViewer, SampleRuns, no_writes_under, snapshot

from expvid.schema import DataError
from expvid.view import ViewSession, export_html
from expvid.view.frames import FrameResolver, confined


def _recorded(run: Path) -> dict[str, dict[str, object]]:
    latest: dict[str, dict[str, object]] = {}
    for line in (run / "predictions.jsonl").read_text().splitlines():
        record = json.loads(line)
        latest[record["item_id"]] = record
    return latest


def test_every_endpoint_reads_and_nothing_is_written(sample_runs: SampleRuns, tmp_path: Path) -> None:
    watched = (sample_runs.run_a, sample_runs.run_b, sample_runs.cache_a, sample_runs.data)
    before = snapshot(*watched)
    recorded = _recorded(sample_runs.run_a)
    with no_writes_under(*watched) as writes:
        session = ViewSession([sample_runs.run_a, sample_runs.run_b])
        with LiveViewer(session) as live, httpx.Client(base_url=live.url, timeout=60) as client:
            page = client.get("/")
            assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
            assert "Tool Recognition" in page.text and "first-option" in page.text
            rows = client.get("api/items").json()
            assert [run["label"] for run in rows["runs"]] == ["random", "first-option"]
            assert {row["i"] for row in rows["rows"]} == set(recorded)
            tools1 = next(row for row in rows["rows"] if row["i"] == "tools/1")
            scores = [
                json.loads(line)
                for line in (sample_runs.run_a / "item_scores.jsonl").read_text().splitlines()
            ]
            assert tools1["r"][0]["a"] == next(s for s in scores if s["item_id"] == "tools/1")["extracted"]
            assert next(row for row in rows["rows"] if row["i"] == "quantity/0")["r"][1]["o"] == "absent"

            for item_id in ("tools/1", "experimental_conclusion/0"):
                detail = client.get("api/item", params={"id": item_id}).json()
                sample = detail["runs"][0]["samples"][0]
                assert sample["prediction"]["prompt"] == recorded[item_id]["meta"]["prompt"]  # type: ignore[index]
                frames = client.get(sample["frames"]["url"]).json()
                assert frames["source"] == "cache"
                want = [f["index"] for f in recorded[item_id]["frames"]]  # type: ignore[union-attr]
                assert [f["index"] for f in frames["frames"]] == want and not frames["mismatch"]
                image = client.get(frames["frames"][-1]["url"])
                assert image.status_code == 200 and image.content[:2] == b"\xff\xd8"  # the JPEG as sent
                if item_id != "tools/1":
                    assert detail["runs"][1]["samples"][0]["outcome"] == "absent"
                    continue
                # run B used no frame cache: the same frames, re-sampled now, and marked so
                other = detail["runs"][1]["samples"][0]
                again = client.get(other["frames"]["url"]).json()
                assert again["source"] == "resampled" and "no frame cache" in again["note"]
                assert [f["index"] for f in again["frames"]] == [
                    f["index"] for f in other["prediction"]["recorded_frames"]
                ]
            blanks = detail["runs"][0]["samples"][0]["judgment"]["blanks"]
            assert [b["gold"] for b in blanks] == detail["gold"] and all(
                b["verdict"] is not None for b in blanks
            )
            assert detail["runs"][0]["samples"][0]["extraction"]["reread"]["rule"]

            # The clip player seeks with Range requests.
            video = client.get("video", params={"id": "tools/1"}, headers={"Range": "bytes=100-199"})
            assert video.status_code == 206 and len(video.content) == 100
            assert video.headers["content-range"].startswith("bytes 100-199/")
            assert client.get("fragment/overview").status_code == 200
            assert client.get("api/version").json()["version"] == session.version
        export_html(session, tmp_path / "bundle.html")
    assert writes == []
    assert snapshot(*watched) == before


def test_requests_cannot_reach_other_files(sample_runs: SampleRuns) -> None:
    session = ViewSession([sample_runs.run_a])
    with LiveViewer(session) as live, httpx.Client(base_url=live.url) as client:
        assert client.get("api/item", params={"id": "../../etc/passwd"}).status_code == 404
        assert client.get("video", params={"id": "../manifest.json"}).status_code == 404
        assert client.get("api/frames", params={"run": "../r0", "id": "tools/1"}).status_code == 404
        assert client.get("frame", params={"run": "r0", "id": "tools/1", "n": 999}).status_code == 404
        assert client.get("/static/..%2f..%2fview%2fapp.py").status_code == 404
        assert client.get("/static/view.js").status_code == 200
        # DNS rebinding: a page on another host name must not read the runs.
        assert client.get("/api/items", headers={"Host": "evil.example"}).status_code == 400


def test_paths_in_annotations_stay_inside_the_dataset(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "videos").mkdir(parents=True)
    (tmp_path / "secret.mp4").write_bytes(b"x")
    assert confined(root, "videos/clip.mp4") == root / "videos" / "clip.mp4"
    assert confined(root, str(root / "videos" / "clip.mp4")) == root / "videos" / "clip.mp4"
    assert confined(root, "../secret.mp4") is None
    assert confined(root, str(tmp_path / "secret.mp4")) is None
    assert confined(root, "videos/../../secret.mp4") is None
    assert confined(None, "videos/clip.mp4") is None


def test_a_gone_frame_cache_means_resampled_frames(sample_runs: SampleRuns, tmp_path: Path) -> None:
    session = ViewSession([sample_runs.run_a], cache_dir=tmp_path / "moved")
    run = session.runs[0]
    found = session.frame_set(run, "tools/1", 0)
    assert found is not None and found.source == "resampled" and "gone" in found.note
    assert [f.index for f in found.frames] == [f.index for f in found.recorded]
    # A cache without the entry (another run's cache): also re-sampled, and said so.
    empty = tmp_path / "empty"
    (empty / "frames").mkdir(parents=True)
    resolver = FrameResolver()
    item = session.item("tools/1")
    assert item is not None
    prediction = run.files.predictions[("tools/1", 0)].model
    again = resolver.resolve(
        item, prediction, run.sampler(item), dataset_root=run.dataset.root, cache_root=empty / "frames"
    )
    assert again.source == "resampled" and "no entry" in again.note
    assert list((empty / "frames").iterdir()) == []  # and nothing was stored there


def test_a_changed_video_is_flagged(sample_runs: SampleRuns, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_runs.data, data)
    session = ViewSession([sample_runs.run_a], data=data, cache_dir=tmp_path / "no-cache")
    item = session.item("tools/1")
    assert item is not None and item.media is not None
    clip = Path(item.media.path)  # type: ignore[union-attr]
    other = next(
        p for p in clip.parent.glob("*.mp4") if p != clip and p.stat().st_size != clip.stat().st_size
    )
    shutil.copyfile(other, clip)
    found = session.frame_set(session.runs[0], "tools/1", 0)
    assert found is not None and found.source == "resampled" and found.mismatch


def test_a_run_being_written_refreshes(sample_runs: SampleRuns, tmp_path: Path) -> None:
    run = tmp_path / "growing"
    run.mkdir()
    shutil.copy(sample_runs.run_a / "manifest.json", run)
    lines = (sample_runs.run_a / "predictions.jsonl").read_bytes().splitlines(keepends=True)
    (run / "predictions.jsonl").write_bytes(b"".join(lines[:5]) + lines[5][:40])
    session = ViewSession([run], min_refresh_s=0)
    with LiveViewer(session) as live, httpx.Client(base_url=live.url) as client:
        rows = client.get("api/items").json()["rows"]
        outcomes = [row["r"][0]["o"] for row in rows]
        assert outcomes.count("unscored") == 5 and outcomes.count("pending") == len(rows) - 5
        assert "being written" in client.get("fragment/overview").text
        version = client.get("api/version").json()["version"]
        with (run / "predictions.jsonl").open("ab") as handle:
            handle.write(lines[5][40:] + b"".join(lines[6:9]))
        assert client.get("api/version").json()["version"] != version
        outcomes = [row["r"][0]["o"] for row in client.get("api/items").json()["rows"]]
        assert outcomes.count("unscored") == 9
        # Scoring runs: item_scores.jsonl and scores.json appear (written atomically), outcomes follow.
        answered = {json.loads(line)["item_id"] for line in lines[:9]}
        scores = [
            line for line in (sample_runs.run_a / "item_scores.jsonl").read_text().splitlines(keepends=True)
            if json.loads(line)["item_id"] in answered
        ]  # fmt: skip
        (run / "item_scores.jsonl").write_text("".join(scores))
        shutil.copy(sample_runs.run_a / "scores.json", run / "scores.json")
        outcomes = [row["r"][0]["o"] for row in client.get("api/items").json()["rows"]]
        assert "unscored" not in outcomes and outcomes.count("pending") == len(rows) - 9
        assert 'data-testid="results"' in client.get("fragment/overview").text


def test_export_refuses_to_write_into_a_run(sample_runs: SampleRuns) -> None:
    session = ViewSession([sample_runs.run_a])
    with pytest.raises(DataError, match="inside a run directory"):
        export_html(session, sample_runs.run_a / "view.html", frames=False)
