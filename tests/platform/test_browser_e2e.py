"""End to end in Debian's headless Chromium (Playwright, never a downloaded browser).

Sign in, review and edit an item with a justification, see the conflict go to adjudication, resolve
it, read the history, export, and load the export the way `expvid eval` does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from platform_browser import browser, no_page_errors, sign_in
from platform_env import Env, LiveServer, password_of
from platform_http import Browserless

from expvid.platform.services.exporter import export_verified
from expvid.suites.expvid_suite import load_expvid

__all__ = ["browser", "no_page_errors"]  # fixtures used by this module


def test_review_conflict_adjudication_export(
    browser: object, env: Env, server: LiveServer, tmp_path: Path
) -> None:
    materials = env.item_id("materials/0")

    # Alice: the clip plays inside its window of the source video, narration is marked as hidden from models.
    alice = sign_in(browser, server, "alice")
    alice.click("a:has-text('materials/0')")
    assert "not visible to models" in alice.inner_text("[data-testid=narration]")
    assert "blind answerable" in alice.inner_text("[data-testid=flags]").lower()
    assert "visible or inferable in the clip" in alice.inner_text("[data-testid=guidelines]")
    alice.wait_for_function(
        "() => { const v = document.querySelector('#player'); return v.dataset.clamped === '1' && v.readyState >= 1; }"
    )
    alice.wait_for_function("() => Math.abs(document.querySelector('#player').currentTime - 2.0) < 0.05")
    alice.evaluate(
        "() => { const v = document.querySelector('#player'); v.playbackRate = 4; return v.play(); }"
    )
    alice.wait_for_function("() => document.querySelector('#player').paused", timeout=15_000)
    stopped_at = alice.evaluate("() => document.querySelector('#player').currentTime")
    assert 3.9 <= stopped_at <= 4.05, stopped_at  # clamped to the clip's end, not the source's

    alice.fill("textarea[name=option_B]", "Trypsin-EDTA")
    assert alice.is_checked("input[name=verdict][value=edit]")  # changing content selects "edit"
    alice.fill("#justification", "the distractor should name the actual reagent bottle")
    alice.click("[data-testid=save]")
    alice.wait_for_url("**/items/*?notice=saved")

    # Bob, blind to Alice's edit, approves the draft as it was.
    bob = sign_in(browser, server, "bob")
    bob.goto(f"/items/{materials}")
    assert bob.input_value("textarea[name=option_B]") == "Trypsin"
    assert "reagent bottle" not in bob.content()
    bob.check("input[name=verdict][value=approve]")
    bob.fill("#justification", "vitronectin bottle is labelled on screen")
    bob.click("[data-testid=save]")
    bob.wait_for_url("**/items/*?notice=saved")

    # Carol sees the conflict, with both judgements and versions anonymous and shuffled.
    carol = sign_in(browser, server, "carol")
    assert "materials/0" in carol.inner_text("[data-testid=conflicts]")
    carol.click("a:has-text('materials/0')")
    carol.wait_for_selector("[data-testid=judgement]")
    text = carol.inner_text("main")
    assert "alice" not in text and "bob" not in text
    assert len(carol.query_selector_all("[data-testid=judgement]")) == 2
    versions = carol.query_selector_all("[data-testid=version]")
    assert len(versions) == 2
    edited = next(
        v for v in versions if v.query_selector("textarea[name=option_B]").input_value() == "Trypsin-EDTA"
    )
    edited.query_selector("textarea[name=justification]").fill("the bottle label reads Trypsin-EDTA at 0:03")
    edited.query_selector("button[type=submit]").click()
    carol.wait_for_url("**/?notice=resolved")
    assert "No conflicts" in carol.inner_text("[data-testid=conflicts]")

    item = env.item("materials/0")
    assert (item.state, item.settled_via, item.options["B"]) == ("verified", "adjudication", "Trypsin-EDTA")  # type: ignore[index]

    # The admin reads the item's history: who, when, what, why.
    root = sign_in(browser, server, "root")
    root.goto(f"/items/{materials}/history")
    history = root.inner_text("[data-testid=history]")
    for expected in ("decision.created", "item.conflict", "item.edited", "item.verified",
                     "the bottle label reads Trypsin-EDTA", "alice", "bob", "carol"):  # fmt: skip
        assert expected in history, expected
    root.goto("/dashboard")
    assert "materials" in root.inner_text("[data-testid=agreement-task]")

    # Export and load it the way `expvid eval --data` does.
    out = tmp_path / "verified"
    assert export_verified(env.database, out).total == 1
    dataset = load_expvid(out, strict=True)
    assert [(i.id, i.options["B"]) for i in dataset.items] == [("materials/0", "Trypsin-EDTA")]  # type: ignore[index]
    # ... and evaluate it (a separate process: Playwright's event loop owns this thread).
    run = tmp_path / "run"
    evaluated = subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", "eval", "--data", str(out), "--model", "first-option",
         "--out", str(run), "--no-cache", "--quiet"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    scores = json.loads((run / "scores.json").read_text())
    assert scores["tasks"]["materials"]["n"] == 1 and scores["run"]["complete"] is True
    prediction = json.loads((run / "predictions.jsonl").read_text())
    assert prediction["item_id"] == "materials/0" and prediction["n_images"] == 8
    for page in (alice, bob, carol, root):
        page.context.close()  # type: ignore[attr-defined]


def test_stale_tab_conflict_and_step_editor(browser: object, env: Env, server: LiveServer) -> None:
    alice = sign_in(browser, server, "alice")
    tools = env.item_id("tools/0")

    # Two tabs on one item: the second save gets a conflict, and keeps what was typed.
    second = alice.context.new_page()  # type: ignore[attr-defined]
    alice.goto(f"/items/{tools}")
    second.goto(f"/items/{tools}")
    alice.check("input[name=verdict][value=approve]")
    alice.fill("#justification", "the dish is visible on the bench")
    alice.click("[data-testid=save]")
    alice.wait_for_url("**/items/*?notice=saved")
    second.check("input[name=verdict][value=reject]")
    second.fill("#justification", "typed in a stale tab")
    second.click("[data-testid=save]")
    second.wait_for_selector("[data-testid=problems]")
    assert "another page" in second.inner_text("[data-testid=problems]")
    assert second.input_value("#justification") == "typed in a stale tab"
    client = Browserless(server.url, "alice", password_of("alice"))
    assert (
        client.client.get(f"/api/items/{tools}").json()["my_decision"]["justification"]
        == "the dish is visible on the bench"
    )

    # Level-2: add a missing operation, preview the rebuilt question, save the edit.
    generation = env.item_id("sequence_generation/0")
    alice.goto(f"/items/{generation}")
    alice.click("tr.step-row >> nth=0 >> [data-add-step]")
    alice.locator("tr.step-row").nth(0).locator("input[name=step_end]").fill("1.6")
    new_row = alice.locator("tr.step-row").nth(1)
    new_row.locator("textarea[name=step_text]").fill("Tilt the plate to drain")
    new_row.locator("input[name=step_start]").fill("1.6")
    new_row.locator("input[name=step_end]").fill("2.0")
    alice.click("[data-preview]")
    alice.wait_for_function(
        "() => document.querySelector('[data-testid=preview]').textContent.includes('Answer')"
    )
    preview = alice.inner_text("[data-testid=preview]")
    assert "4. Tilt the plate to drain" in preview and '["3","4","5","6"]' in preview
    assert alice.is_checked("input[name=verdict][value=edit]")
    alice.fill("#justification", "draining is visible before the rinse")
    alice.click("[data-testid=save]")
    alice.wait_for_url("**/items/*?notice=saved")
    mine = client.client.get(f"/api/items/{generation}").json()["my_decision"]
    assert mine["verdict"] == "edit" and mine["proposal"]["answer"] == ["3", "4", "5", "6"]
    client.close()
    alice.context.close()  # type: ignore[attr-defined]
