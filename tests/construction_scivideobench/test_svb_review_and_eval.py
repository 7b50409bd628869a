"""From the recipe's candidates to a verified SciVideoBench release and a report:
platform import -> two annotators review (one adds an overlay of a spoken value) -> export -> eval -> report.

The review runs over HTTP against the real app on loopback (sign-in, CSRF, forms, the API), on SQLite.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import av
import numpy as np
from svb_helpers import SvbBuild
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "platform"))

from platform_env import FAST_PASSWORDS, add_users, password_of
from platform_http import Browserless
from sqlalchemy import select

from expvid.cli.main import app
from expvid.platform import PlatformSettings
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.db.models import Item
from expvid.platform.services.exporter import export_public
from expvid.platform.services.importer import import_candidates
from expvid.platform.testing import LiveServer
from expvid.platform.web.app import create_app
from expvid.suites.scivideobench import load_scivideobench

USERS = {"alice": ("annotator", []), "bob": ("annotator", []), "carol": ("adjudicator", [])}


def _mean_bottom_brightness(path: Path, at: float) -> float:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        for frame in container.decode(stream):
            if frame.time is not None and frame.time >= at:
                image = frame.to_ndarray(format="gray")
                return float(np.mean(image[-image.shape[0] // 6 :]))
    raise AssertionError(f"no frame at {at} s")


def test_review_with_overlay_export_and_eval(svb_build: SvbBuild, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'review.db'}"
    upgrade_to_head(url)
    database = Database(url)
    add_users(database, USERS)
    imported = import_candidates(database, svb_build.out)
    assert imported.total_imported == 6 and not imported.problems
    with database.read() as db:
        items = list(db.scalars(select(Item).order_by(Item.release_key)))
    quantitative = next(i for i in items if i.task == "quantitative")
    assert quantitative.provenance["uid"].endswith("/quantitative")
    settings = PlatformSettings(database_url=url, passwords=FAST_PASSWORDS)
    with LiveServer(create_app(settings, database=database)) as live:
        alice = Browserless(live.url, "alice", password_of("alice"))
        bob = Browserless(live.url, "bob", password_of("bob"))
        page = alice.client.get(f"/items/{quantitative.id}").text
        # timestamps shown as buttons that play the video there; the comparer's evidence; the transcript's origin
        times = re.findall(r'data-seek="(\d+)" data-seek-end="(\d+)" data-testid="question-time"', page)
        assert times and all(int(a) < int(b) for a, b in times)
        assert 'data-testid="svb-cues"' in page and "spoken only (2.50 g)" in page
        assert "openai · whisper-1 · language english" in page
        assert 'data-testid="overlay-suggestion"' in page
        start, end = map(int, times[0])
        refused = alice.form_post(
            f"/items/{quantitative.id}/overlays", {"text": "m = 2.50 g", "start": end, "end": start}
        )
        assert refused.status_code == 303 and "overlay%3A" in refused.headers["location"]
        added = alice.form_post(
            f"/items/{quantitative.id}/overlays", {"text": "m = 2.50 g", "start": start, "end": end}
        )
        assert added.status_code == 303 and "overlay%20added" in added.headers["location"]
        assert "“m = 2.50 g” on" in alice.client.get(f"/items/{quantitative.id}").text
        for item in items:
            for reviewer in (alice, bob):
                response = reviewer.decide(item.id, "approve", "the cues are visible at the times given")
                assert response.status_code == 200, response.text
        alice.close()
        bob.close()
    with database.read() as db:
        assert {i.state for i in db.scalars(select(Item))} == {"verified"}
        overlays = db.get(Item, quantitative.id).provenance["overlays"]  # type: ignore[union-attr]
    assert overlays[0]["by"] == "alice" and overlays[0]["text"] == "m = 2.50 g"
    release = tmp_path / "verified"
    export_public(database, release)
    database.dispose()
    # the published layout: the same records (verified), the overlay burned onto the released video
    exported = load_scivideobench(release)
    assert len(exported.items) == 6 and not exported.problems
    rows = [
        json.loads(line)
        for line in (release / "scivideobench_1k.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    built = {
        (r["video_id"], r["question_id"], r["question_type"]): r
        for r in (
            json.loads(line)
            for line in (svb_build.out / "scivideobench_1k.jsonl").read_text(encoding="utf-8").splitlines()
        )
    }
    assert all(built[(r["video_id"], r["question_id"], r["question_type"])] == r for r in rows)
    video = release / "videos" / f"jove_{quantitative.video_id}.mp4"
    plain = svb_build.out / "videos" / f"jove_{quantitative.video_id}.mp4"
    middle = (start + end) / 2
    assert _mean_bottom_brightness(video, middle) < _mean_bottom_brightness(plain, middle) - 5  # the banner
    assert abs(_mean_bottom_brightness(video, end + 3) - _mean_bottom_brightness(plain, end + 3)) < 5
    with av.open(str(video)) as burned, av.open(str(plain)) as narrated:  # the narration is still there
        assert burned.streams.audio and burned.streams.audio[0].frames == narrated.streams.audio[0].frames
    internal = json.loads(
        (tmp_path / "verified-INTERNAL-do-not-publish" / "overlays.json").read_text(encoding="utf-8")
    )
    assert internal[0]["overlays"][0]["text"] == "m = 2.50 g" and internal[0]["frames_with_text"] > 0
    # evaluate the verified release unchanged, then report
    runner = CliRunner()
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "eval",
            "--suite",
            "scivideobench",
            "--data",
            str(release),
            "--model",
            "random:1",
            "--out",
            str(run),
            "--frames",
            "all=2",
            "--size",
            "64",
            "--no-cache",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    table = tmp_path / "report.md"
    report = runner.invoke(app, ["report", str(run), "--markdown", str(table)])
    assert report.exit_code == 0, report.output
    text = table.read_text(encoding="utf-8")
    assert "Conceptual" in text and "Quantitative" in text
