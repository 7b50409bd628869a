"""Runs written by other versions of expvid: older (fewer fields), newer (unknown fields), moved.

The run here is written by hand, field by field, the way an older expvid wrote it: no `sent`, the
finish reason in `meta`, no prompt recorded, no sampler settings in the manifest. It is on the
bundled ProMQA sample, whose items play a window [0, end] of a longer recording.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from view_support import LiveViewer, new_page

from expvid.media.sampler import sample_with_settings
from expvid.suites.promqa import make_promqa_sample
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import get_suite
from expvid.view import ViewSession, export_html


@pytest.fixture(scope="module")
def old_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("old_run")
    data = base / "promqa"
    make_promqa_sample(data)
    suite = get_suite("promqa")
    item = suite.load(data, check_media=False).items[0]
    settings = suite.sampler(item, FrameOptions())
    assert settings is not None and item.media is not None
    sampled = sample_with_settings(
        item.media.path, settings, start=item.media.start, end=item.media.end, cache=False
    )  # type: ignore[union-attr]
    run = base / "run"
    run.mkdir()
    manifest = {
        "suite": "promqa",
        "model": "legacy-model",
        "dataset_root": "../promqa",  # relative to where that eval ran (here: the run directory)
        "config": {"settings": {"data": "../promqa"}, "cluster": {"gpus": 8}},
        "accelerator": {"name": "H100", "count": 8},  # a field this expvid does not know
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    prediction = {
        "item_id": item.id,
        "task": item.task,
        "model": "legacy-model",
        "response": "<think>The last frame shows the mixing bowl.</think>The mixing bowl",
        "frames": [{"index": f.index, "time": f.time} for f in sampled.frames],
        "n_images": len(sampled.frames),
        "meta": {"finish_reason": "length", "gpu_seconds": 1.5},
        "shard": 3,  # unknown
    }
    (run / "predictions.jsonl").write_text(json.dumps(prediction) + "\n")
    return run, data, prediction


def test_an_older_run_is_read_and_unknown_fields_are_shown(
    old_run: tuple[Path, Path, dict[str, Any]],
) -> None:
    run, data, prediction = old_run
    session = ViewSession([run])
    assert (
        session.runs[0].dataset.root is not None and session.runs[0].dataset.root.resolve() == data.resolve()
    )
    with LiveViewer(session) as live, httpx.Client(base_url=live.url, timeout=60) as client:
        overview = client.get("fragment/overview").text
        assert "accelerator" in overview and "H100" in overview and "cluster" in overview
        assert "Not recorded: this run was made before expvid recorded the request as sent" in overview
        rows = client.get("api/items").json()["rows"]
        cell = next(row for row in rows if row["i"] == prediction["item_id"])["r"][0]
        assert cell["o"] == "unscored" and "T" in cell["f"]  # truncated, read from the old meta field
        detail = client.get("api/item", params={"id": prediction["item_id"]}).json()
        entry = detail["runs"][0]["samples"][0]
        assert entry["truncated"]
        p = entry["prediction"]
        assert p["extra"] == {"shard": 3} and p["meta_extra"] == {"gpu_seconds": 1.5}
        assert p["prompt_source"].startswith("rebuilt by the suite") and detail["question"] in p["prompt"]
        assert (
            p["answer_text"] == "The mixing bowl"
            and p["inline_reasoning"] == "The last frame shows the mixing bowl."
        )
        assert detail["media"]["start"] == 0.0 and detail["media"]["end"] == 7.0
        frames = client.get(entry["frames"]["url"]).json()
        assert frames["source"] == "resampled" and not frames["mismatch"]
        assert [f["index"] for f in frames["frames"]] == [f["index"] for f in prediction["frames"]]


def test_a_moved_dataset_is_said_and_the_run_still_shows(
    old_run: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    run, data, prediction = old_run
    moved = tmp_path / "run"
    shutil.copytree(run, moved)  # ../promqa no longer exists next to it
    session = ViewSession([moved])
    assert session.runs[0].dataset.note and "pass --data" in session.runs[0].dataset.note
    bundle_path = tmp_path / "view.html"
    export_html(session, bundle_path)
    text = bundle_path.read_text()
    assert "dataset not found" in text and prediction["item_id"] in text
    found = ViewSession([moved], data=data)  # --data points at it again
    assert found.item(prediction["item_id"]) is not None


def test_the_clip_plays_only_its_window(browser: Any, old_run: tuple[Path, Path, dict[str, Any]]) -> None:
    run, _, prediction = old_run
    errors: list[str] = []
    with LiveViewer(ViewSession([run])) as live:
        page = new_page(browser, errors, live.url)
        page.goto("/#/item/" + prediction["item_id"])
        page.wait_for_function(
            "() => { const v = document.querySelector('#player'); return v && v.dataset.clamped === '1' && v.readyState >= 1; }"
        )
        page.evaluate(
            "() => { const v = document.querySelector('#player'); v.playbackRate = 8; return v.play(); }"
        )
        page.wait_for_function("() => document.querySelector('#player').paused", timeout=20_000)
        stopped = page.evaluate("() => document.querySelector('#player').currentTime")
        assert 6.9 <= stopped <= 7.05, stopped  # the window's end, not the recording's (40 s)
        assert len(page.query_selector_all("[data-testid=run-r0] [data-testid=frame]")) == len(
            prediction["frames"]
        )
        assert page.inner_text("[data-testid=run-r0] [data-testid=frames-source]") == "re-sampled"
    assert errors == []
