"""The procedural review page in headless Chromium: Figure 11's layout and its one behaviour (answers
are judged only once the question is judged valid), submitted through the page's own form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from promqa_build_helpers import run
from promqa_lab import PromqaLab
from sqlalchemy import select

from chromium import launched_chromium
from expvid.fakes.models.server import LoopbackServer
from expvid.platform import PlatformSettings, create_app, open_database
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.models import Decision, Item
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.errors import SYSTEM
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.users import add_user
from expvid.platform.testing import LiveServer

FAST = PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)


@pytest.fixture(scope="module")
def candidates(sample_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built before the browser starts (Playwright's sync API holds an event loop while it is open)."""
    out = tmp_path_factory.mktemp("promqa_browser") / "cand"
    with LoopbackServer(PromqaLab()) as server:
        run(sample_sources, out, server, next=4, missing=0, others=0)
    return out


@pytest.fixture(scope="module")
def browser(candidates: Path) -> Iterator[Any]:
    with launched_chromium() as chromium:
        yield chromium


def test_answers_appear_once_the_question_is_judged_valid(
    candidates: Path, browser: Any, tmp_path: Path
) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'p.db'}")
    with database.write() as db:
        for name in ("ann1", "ann2"):
            add_user(
                db, Passwords(FAST), username=name, password=f"pw-{name}-x", role="annotator", actor=SYSTEM
            )
    import_candidates(database, candidates)
    with database.read() as db:
        item = db.scalar(select(Item).order_by(Item.id).limit(1))
    assert item is not None
    settings = PlatformSettings(database_url=str(database.url), passwords=FAST)
    with LiveServer(create_app(settings, database=database)) as live:
        context = browser.new_context(base_url=live.url)
        context.set_default_timeout(10_000)
        errors: list[str] = []
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("/login")
        page.fill("#username", "ann1")
        page.fill("#password", "pw-ann1-x")
        page.click("button[type=submit]")
        page.wait_for_selector("[data-testid=who]:has-text('ann1')")
        page.goto(f"/items/{item.id}")
        assert page.locator("[data-testid=recipe-graph] svg g.step-current").count() == 1
        assert page.locator("[data-testid=recipe-graph] svg g.step-passed").count() >= 1
        answers = page.locator("[data-answers]")
        assert not answers.is_visible()
        page.check("input[name=question_valid][value=no]")
        assert not answers.is_visible()
        page.check("input[name=question_valid][value=yes]")
        assert answers.is_visible()
        for index in range(len(item.answer)):
            page.check(f"input[name=answer_{index}][value=yes]")
        page.fill("#written", "You could also rinse the mug first.")
        page.click("[data-testid=save]")
        page.wait_for_url("**notice=saved**")
        context.close()
    with database.read() as db:
        decision = db.scalar(select(Decision).where(Decision.item_id == item.id))
    database.dispose()
    assert errors == []
    assert decision is not None and decision.proposal == {
        "judge": {"question": True, "answers": [True] * len(item.answer),
                  "comment": ["You could also rinse the mug first."]}
    }  # fmt: skip
    assert decision.seconds_spent is not None and decision.seconds_spent >= 0
