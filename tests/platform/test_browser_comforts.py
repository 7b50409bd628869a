"""The reviewer's comforts in Debian's headless Chromium: the keyboard decision loop and its help,
the clickable timeline, the step editor's checks and its "reject but keep my corrections" outcome,
refused saves that survive a reload without re-posting, adjudication of step lists with their
derived questions, the admin's filters, charts and staffing, and the sample on a first try."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_browser import browser, no_page_errors, sign_in, sign_in_in
from platform_env import FAST_PASSWORDS, Env, LiveServer, add_users, decide
from sqlalchemy import func, select

from expvid.platform import PlatformSettings, create_app
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Adjudication, Decision, Item, Segment
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.level2 import StepRow, rows_from_steps
from expvid.platform.services.settlement import segment_steps

__all__ = ["browser", "no_page_errors"]  # fixtures used by this module


def _player_time(page: object) -> float:
    return float(page.evaluate("() => document.querySelector('#player').currentTime"))  # type: ignore[attr-defined]


def _wait_clamped(page: object) -> None:
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => { const v = document.querySelector('#player'); return v.readyState >= 1 && "
        "(v.dataset.start === '' || Math.abs(v.currentTime - parseFloat(v.dataset.start)) < 0.05); }"
    )


def _decisions(env: Env, key: str) -> list[Decision]:
    with env.database.read() as db:
        return list(
            db.scalars(select(Decision).where(Decision.item_id == env.item_id(key)).order_by(Decision.id))
        )


def test_the_whole_decision_loop_runs_from_the_keyboard(
    browser: object, env: Env, server: LiveServer
) -> None:
    alice = sign_in(browser, server, "alice")
    materials = env.item_id("materials/0")
    alice.goto(f"/items/{materials}")
    _wait_clamped(alice)
    alice.keyboard.press("?")
    assert alice.is_visible("[data-testid=shortcuts]") and "one frame back" in alice.inner_text("#shortcuts")
    alice.keyboard.press("Escape")
    assert not alice.is_visible("[data-testid=shortcuts]")

    start = _player_time(alice)  # 2.0: the clip's window in the 10 fps source video
    alice.keyboard.press(".")
    alice.wait_for_function(
        f"() => Math.abs(document.querySelector('#player').currentTime - {start + 0.1}) < 0.02"
    )
    alice.keyboard.press(",")
    alice.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {start}) < 0.02")
    alice.keyboard.press("ArrowRight")
    alice.wait_for_function(
        f"() => Math.abs(document.querySelector('#player').currentTime - {start + 1}) < 0.02"
    )
    alice.keyboard.press("0")
    alice.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {start}) < 0.02")
    alice.keyboard.press(" ")
    alice.wait_for_function("() => !document.querySelector('#player').paused")
    alice.keyboard.press("k")
    alice.wait_for_function("() => document.querySelector('#player').paused")

    alice.keyboard.press("r")
    assert alice.is_checked("input[name=verdict][value=reject]")
    alice.keyboard.press("Escape")  # leave the justification field
    alice.keyboard.press("a")
    assert alice.is_checked("input[name=verdict][value=approve]")
    assert alice.evaluate("() => document.activeElement.id") == "justification"
    alice.keyboard.type("vitronectin bottle labelled on screen")
    alice.keyboard.press("Control+Enter")
    alice.wait_for_url("**/items/*?notice=saved")
    assert [(d.verdict, d.justification) for d in _decisions(env, "materials/0")] == [
        ("approve", "vitronectin bottle labelled on screen")
    ]
    here = alice.url
    alice.keyboard.press("n")
    alice.wait_for_url(lambda url: url != here and "/items/" in url)
    alice.keyboard.press("e")  # edit: the cursor goes to the item's first field
    assert alice.evaluate("() => document.activeElement.matches('[data-content]')")
    alice.context.close()  # type: ignore[attr-defined]


def test_timeline_and_step_editor_checks(browser: object, env: Env, server: LiveServer) -> None:
    alice = sign_in(browser, server, "alice")
    generation = env.item_id("sequence_generation/0")
    alice.goto(f"/items/{generation}")
    # The clip file plays (no source window); segment 1.0-4.0 s, so steps sit at 0-1, 1-2, 2-3 s.
    alice.wait_for_selector(".timeline svg .tl-step >> nth=2", state="attached")
    assert alice.locator(".timeline .tl-step").count() == 3
    alice.locator(".timeline .tl-step").nth(1).click()
    alice.wait_for_function("() => Math.abs(document.querySelector('#player').currentTime - 1.0) < 0.05")

    rows = alice.locator("tr.step-row")
    rows.nth(0).locator("input[name=step_end]").fill("2.5")  # overlaps step 4 (2.0-3.0)
    alice.wait_for_selector("[data-testid=step-problems]:has-text('rows 1 and 2 overlap')")
    assert "bad" in (rows.nth(0).get_attribute("class") or "")
    rows.nth(2).locator("input[name=step_start]").fill("9")
    alice.wait_for_selector("[data-testid=step-problems]:has-text('lies outside the segment (1-4 s)')")
    alice.fill("#justification", "the rinse starts later")
    alice.click("[data-testid=save]")  # refused in the page: nothing is posted
    alice.wait_for_timeout(300)
    assert "/decision" not in alice.url and _decisions(env, "sequence_generation/0") == []

    rows.nth(0).locator("input[name=step_end]").fill("1.6")
    rows.nth(2).locator("input[name=step_start]").fill("3.0")
    alice.wait_for_selector("[data-testid=step-problems]", state="hidden")
    # The timeline follows the table; the clock button takes the player's time (source clock).
    alice.wait_for_function("() => document.querySelectorAll('.timeline .tl-step').length === 3")
    alice.evaluate("() => { document.querySelector('#player').currentTime = 0.5; }")
    alice.wait_for_function("() => Math.abs(document.querySelector('#player').currentTime - 0.5) < 0.05")
    rows.nth(0).locator("[data-time-from-player=step_start]").click()
    assert rows.nth(0).locator("input[name=step_start]").input_value() == "1.5"
    alice.click("[data-testid=save]")
    alice.wait_for_url("**/items/*?notice=saved")
    (mine,) = _decisions(env, "sequence_generation/0")
    assert mine.verdict == "edit" and mine.proposal is not None
    assert [(s["start"], s["end"]) for s in mine.proposal["steps"]] == [(1.5, 1.6), (2.0, 3.0), (3.0, 4.0)]
    alice.context.close()  # type: ignore[attr-defined]


def test_an_impossible_question_offers_rejection_and_refusals_survive_reload(
    browser: object, env: Env, server: LiveServer
) -> None:
    alice = sign_in(browser, server, "alice")
    ordering = env.item_id("sequence_ordering/0")
    alice.goto(f"/items/{ordering}")
    alice.locator("tr.step-row").nth(1).locator("select[name=step_action]").select_option("remove")
    assert alice.is_checked("input[name=verdict][value=edit]")
    alice.fill("#justification", "the rinse is not in the clip")
    alice.click("[data-testid=save]")
    panel = alice.wait_for_selector("[data-testid=cannot-rebuild]", state="visible")
    assert "wrong ordering" in panel.inner_text() and "reject this question" in panel.inner_text()
    assert _decisions(env, "sequence_ordering/0") == []  # warned before anything was saved
    alice.click("[data-reject-keep-steps]")
    alice.wait_for_url("**/items/*?notice=saved")
    (mine,) = _decisions(env, "sequence_ordering/0")
    assert mine.verdict == "reject" and mine.proposal is not None
    assert [s["ref"] for s in mine.proposal["steps"]] == [3, 5]

    # A refused save redirects (POST-redirect-GET): reloading shows it again and posts nothing.
    conclusion = env.item_id("experimental_conclusion/0")
    alice.goto(f"/items/{conclusion}")
    alice.fill("#question", "Colonies on the ____ coating stayed pluripotent for ____ hours at ____ °C.")
    alice.fill("#justification", "temperature matters here")
    alice.click("[data-testid=save]")
    alice.wait_for_url("**/items/*?draft=*")
    assert "3 blank(s) but 2 answer(s)" in alice.inner_text("[data-testid=problems]")
    with env.database.read() as db:
        events = db.scalar(select(func.count()).select_from(Decision))
    alice.reload()
    assert "3 blank(s) but 2 answer(s)" in alice.inner_text("[data-testid=problems]")
    assert alice.input_value("#justification") == "temperature matters here"
    assert "at ____ °C" in alice.input_value("#question")
    with env.database.read() as db:
        assert db.scalar(select(func.count()).select_from(Decision)) == events
    alice.context.close()  # type: ignore[attr-defined]


def test_adjudicating_a_step_list_shows_its_questions_and_keeps_own_edits(
    browser: object, env: Env, server: LiveServer
) -> None:
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
        assert segment is not None
        rows = rows_from_steps(segment_steps(segment))
    rows[1] = StepRow(4, "Rinse the well twice with 1 mL PBS", 2.0, 3.0)
    decide(env, "alice", "sequence_generation/0", "edit", rows=rows)
    decide(env, "bob", "sequence_generation/0", "approve")
    carol = sign_in(browser, server, "carol")
    carol.goto(f"/adjudicate/{env.item_id('sequence_generation/0')}")
    versions = carol.locator("[data-testid=version]")
    assert versions.count() == 2
    for i in range(2):
        derived = versions.nth(i).locator(".derived-question")
        assert derived.count() == 4
        assert (
            versions.nth(i).locator(".derived-question[data-item='sequence_ordering/0'] .opts li").count()
            == 4
        )
    edited = carol.locator("[data-testid=version]:has(textarea[name=step_text]:text('1 mL PBS'))")
    edited.locator("textarea[name=step_text]").nth(1).fill("Rinse the well twice with 1 mL warm PBS")
    edited.locator("[data-preview]").click()
    carol.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=preview]')].some(p => p.textContent.includes('warm PBS'))"
    )
    carol.keyboard.press("2" if edited.get_attribute("data-version") == "2" else "1")
    assert carol.evaluate("() => document.activeElement.name") == "justification"
    carol.keyboard.type("the label says warm PBS")
    carol.keyboard.press("Control+Enter")
    carol.wait_for_url("**/?notice=resolved")
    item = env.item("sequence_generation/0")
    assert item.state == "verified" and "1 mL warm PBS" in item.question
    with env.database.read() as db:
        call = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id))
    assert call is not None and call.own_edit is True
    carol.context.close()  # type: ignore[attr-defined]


def test_admin_filters_charts_and_staffing(browser: object, env: Env, server: LiveServer) -> None:
    decide(env, "alice", "tools/0", "approve")
    decide(env, "bob", "tools/0", "approve")
    root = sign_in(browser, server, "root")
    root.goto("/items")
    root.fill("input[name=q]", "coverslip")
    root.select_option("select[name=reviewer]", "bob")
    root.click("[data-testid=filters] button[type=submit]")
    root.wait_for_url("**/items?q=coverslip*")
    listed = root.inner_text("[data-testid=items]")
    assert "tools/1" in listed and "materials/0" not in listed
    root.select_option("select[name=flag]", "short_of_annotators")
    root.fill("input[name=q]", "")
    root.select_option("select[name=reviewer]", "")
    root.click("[data-testid=filters] button[type=submit]")
    root.wait_for_selector("[data-testid=items] tr[data-item]")
    assert root.locator("[data-testid=items] tr[data-item]").count() == 1
    root.click("a:has-text('tools/2')")
    assert "short of 1 annotator(s)" in root.inner_text("[data-testid=staffing]").lower()
    root.select_option("[data-testid=staffing] select[name=username]", "bob")
    root.click("[data-testid=staffing] button[type=submit]")
    root.wait_for_selector("[data-testid=notice]:has-text('bob added as an annotator')")
    assert env.item("tools/2").state == "in_review"

    root.goto("/dashboard")
    for chart in ("chart-progress", "chart-throughput", "chart-agreement"):
        assert root.locator(f"svg[data-testid={chart}]").is_visible(), chart
    assert (
        root.locator("svg[data-testid=chart-progress] circle[data-series=verified]").last.get_attribute(
            "data-value"
        )
        == "1"
    )
    assert (
        root.locator("svg[data-testid=chart-throughput] rect[data-annotator=alice]").get_attribute(
            "data-value"
        )
        == "1"
    )
    assert (
        root.locator("svg[data-testid=chart-agreement] rect[data-task=tools]").get_attribute("data-value")
        == "100.0"
    )
    assert "Every open item has its annotators" in root.inner_text("[data-testid=short-of-annotators]")
    root.context.close()  # type: ignore[attr-defined]


@pytest.fixture
def sample_server(db_url: str, sample_dir: Path) -> Iterator[tuple[LiveServer, Database]]:
    database = Database(db_url)
    add_users(database, {"ann1": ("annotator", []), "ann2": ("annotator", [])})
    report = import_candidates(database, sample_dir)
    assert report.problems == [] and report.warnings == [] and report.segments > 0
    settings = PlatformSettings(database_url=db_url, passwords=FAST_PASSWORDS)
    try:
        with LiveServer(create_app(settings, database=database)) as live:
            yield live, database
    finally:
        database.dispose()


def test_the_sample_shows_the_step_editor_and_the_paper_on_a_first_try(
    browser: object, sample_server: tuple[LiveServer, Database]
) -> None:
    server, database = sample_server
    with database.read() as db:
        level2 = db.scalar(
            select(Item.id).where(Item.task == "video_verification").order_by(Item.id).limit(1)
        )
        level3 = db.scalar(select(Item.id).where(Item.level == 3).order_by(Item.id).limit(1))
    annotator = sign_in(browser, server, "ann1")
    annotator.goto(f"/items/{level2}")
    assert annotator.locator("[data-testid=steps] tr.step-row").count() >= 3
    _wait_clamped(annotator)  # the source video, clamped to the clip's window...
    assert "skips what was cut from the clip" in annotator.inner_text(
        "[data-testid=window]"
    )  # ...minus the removed step
    annotator.wait_for_selector(".timeline svg .tl-step", state="attached")
    assert annotator.locator(".timeline .tl-removed").count() == 1
    annotator.goto(f"/items/{level3}")
    paper = annotator.inner_text("[data-testid=paper]")
    assert "Results" in paper and "Discussion" in paper and "No paper sections" not in paper
    _question_shows_whole(annotator)
    annotator.context.close()  # type: ignore[attr-defined]
    # The same where CSS cannot size a box to its text (Firefox, older Safari): app.js does it.
    context = browser.new_context(base_url=server.url, bypass_csp=True)  # type: ignore[attr-defined]
    context.add_init_script(
        "const supports = CSS.supports.bind(CSS);"
        "CSS.supports = (p, v) => (String(p).startsWith('field-sizing') ? false : supports(p, v));"
        "document.addEventListener('DOMContentLoaded', () => { const s = document.createElement('style');"
        "s.textContent = 'textarea.grow { field-sizing: fixed !important }'; document.head.append(s); }, true);"
    )
    older = sign_in_in(context, server, "ann1")
    older.goto(f"/items/{level3}")
    assert (
        older.evaluate("() => getComputedStyle(document.querySelector('#question')).fieldSizing") == "fixed"
    )
    _question_shows_whole(older)
    context.close()


def _question_shows_whole(page: object) -> None:
    """A Level-3 question is a paragraph: its box shows all of it and grows as the reviewer writes."""
    size = "() => { const t = document.querySelector('#question'); return [t.clientHeight, t.scrollHeight]; }"
    shown, needed = page.evaluate(size)  # type: ignore[attr-defined]
    assert needed <= shown + 1, (shown, needed)
    page.focus("#question")  # type: ignore[attr-defined]
    page.keyboard.press("End")  # type: ignore[attr-defined]
    page.keyboard.type(" More text the reviewer adds here." * 6)  # type: ignore[attr-defined]
    grown, needed = page.evaluate(size)  # type: ignore[attr-defined]
    assert grown > shown and needed <= grown + 1, (shown, grown, needed)
