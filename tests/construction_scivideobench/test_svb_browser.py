"""The SciVideoBench verifier's page in Debian's headless Chromium (Playwright, never a downloaded browser).

On the recipe's real candidates (imported into the platform): a time in the question is a button
that plays the video from there and stops at the range's end; the visual comparer's cues and the
transcript's provenance are beside the question; an overlay typed into the page's form is recorded
in the item's provenance and its audit trail, and listed on the page.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from svb_helpers import SvbBuild

sys.path.insert(0, str(Path(__file__).parents[1] / "platform"))

from platform_browser import browser, no_page_errors, sign_in
from platform_env import FAST_PASSWORDS, add_users
from sqlalchemy import select

from expvid.platform import PlatformSettings
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.db.models import AuditEvent, Item
from expvid.platform.services.importer import import_candidates
from expvid.platform.testing import LiveServer
from expvid.platform.web.app import create_app

__all__ = ["browser", "no_page_errors"]  # fixtures used by this module


@dataclass
class Platform:
    database: Database
    server: LiveServer
    item_id: int


@pytest.fixture(scope="module")
def platform(svb_build: SvbBuild, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    url = f"sqlite:///{tmp_path_factory.mktemp('svb_browser') / 'review.db'}"
    upgrade_to_head(url)
    database = Database(url)
    add_users(database, {"alice": ("annotator", []), "bob": ("annotator", [])})
    assert import_candidates(database, svb_build.out).total_imported == 6
    with database.read() as db:
        item_id = next(i.id for i in db.scalars(select(Item).order_by(Item.key)) if i.task == "quantitative")
    settings = PlatformSettings(database_url=url, passwords=FAST_PASSWORDS)
    with LiveServer(create_app(settings, database=database)) as server:
        yield Platform(database, server, item_id)
    database.dispose()


def test_a_time_plays_its_range_and_an_overlay_is_recorded(browser: object, platform: Platform) -> None:
    page = sign_in(browser, platform.server, "alice")
    page.goto(f"/items/{platform.item_id}")  # type: ignore[attr-defined]
    assert "openai · whisper-1 · language english" in page.inner_text("[data-testid=svb-transcript]")  # type: ignore[attr-defined]
    assert "spoken only (2.50 g)" in page.inner_text("[data-testid=svb-cues]")  # type: ignore[attr-defined]
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1")  # type: ignore[attr-defined]

    # The question's time range: a click plays the video from its start and stops at its end.
    button = page.locator("[data-testid=question-time]").first  # type: ignore[attr-defined]
    start, end = float(button.get_attribute("data-seek")), float(button.get_attribute("data-seek-end"))
    assert 0 <= start < end
    page.evaluate("() => { document.querySelector('#player').muted = true; }")  # type: ignore[attr-defined]
    button.click()
    page.wait_for_function(  # type: ignore[attr-defined]
        "(s) => { const v = document.querySelector('#player'); return !v.paused && v.currentTime >= s; }",
        arg=start,
    )
    page.evaluate("() => { document.querySelector('#player').playbackRate = 4; }")  # type: ignore[attr-defined]
    page.wait_for_function("() => document.querySelector('#player').paused", timeout=20_000)  # type: ignore[attr-defined]
    stopped = page.evaluate("() => document.querySelector('#player').currentTime")  # type: ignore[attr-defined]
    assert stopped == pytest.approx(end, abs=0.05), (start, end, stopped)

    # A comparer cue's time seeks there too (no range end: it keeps playing).
    cue = page.locator("[data-testid=svb-cues] button[data-seek]").first  # type: ignore[attr-defined]
    cue_start = float(cue.get_attribute("data-seek"))
    cue.click()
    page.wait_for_function(  # type: ignore[attr-defined]
        "(s) => { const v = document.querySelector('#player'); return !v.paused && v.currentTime >= s; }",
        arg=cue_start,
    )
    page.evaluate("() => document.querySelector('#player').pause()")  # type: ignore[attr-defined]

    # The overlay tool: the spoken mass burned onto the range it is needed in.
    form = page.locator("[data-testid=overlay-form]")  # type: ignore[attr-defined]
    form.locator("input[name=text]").fill("m = 2.50 g")
    form.locator("input[name=start]").fill(str(start))
    form.locator("input[name=end]").fill(str(end))
    form.locator("select[name=position]").select_option("top")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/items/*?notice=overlay%20added")  # type: ignore[attr-defined]
    listed = page.inner_text("[data-testid=overlay]")  # type: ignore[attr-defined]
    assert "“m = 2.50 g”" in listed and "(top)" in listed and "by alice" in listed

    with platform.database.read() as db:
        item = db.get(Item, platform.item_id)
        assert item is not None
        (overlay,) = item.provenance["overlays"]
        events = list(
            db.scalars(
                select(AuditEvent).where(
                    AuditEvent.item_id == platform.item_id, AuditEvent.action == "item.overlay_added"
                )
            )
        )
    assert overlay["text"] == "m = 2.50 g" and overlay["position"] == "top" and overlay["by"] == "alice"
    assert (overlay["start"], overlay["end"]) == (pytest.approx(start), pytest.approx(end))
    assert len(events) == 1 and events[0].after["text"] == "m = 2.50 g"
