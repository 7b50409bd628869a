"""The viewer in Debian's headless Chromium (Playwright; never a downloaded browser).

Served: open a run of the bundled sample, filter to wrong answers, open an item, see its frames
(as many as were sent, with the recorded indices), move with the keyboard, follow a deep link,
watch a run that is still being written update. Exported: the same from a file:// URL, no server.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from view_support import LiveViewer, SampleRuns, new_page

from expvid.view import ViewSession, export_html


def _latest(path: Path) -> dict[str, dict[str, Any]]:
    latest = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        latest[record["item_id"]] = record
    return latest


def _wrong_ids(run: Path) -> list[str]:
    """Items the run answered, scored 0 with an answer read and no judge failure: "wrong"."""
    wrong = []
    for line in (run / "item_scores.jsonl").read_text().splitlines():
        score = json.loads(line)
        if score["status"] == "ok" and score["earned"] == 0 and not score["judge_error"]:
            wrong.append(score["item_id"])
    return wrong


def _frames(page: Any, run_key: str) -> list[dict[str, str]]:
    selector = f"[data-testid=run-{run_key}] [data-testid=frame]"
    return page.eval_on_selector_all(
        selector, "els => els.map(e => ({index: e.dataset.index, time: e.dataset.time}))"
    )


def test_filter_open_frames_keyboard_deep_link(browser: Any, sample_runs: SampleRuns) -> None:
    recorded = _latest(sample_runs.run_a / "predictions.jsonl")
    recorded_b = _latest(sample_runs.run_b / "predictions.jsonl")
    wrong = [i for i in _wrong_ids(sample_runs.run_a) if i.startswith("tools/")]
    assert wrong, "the random baseline got every tools item right: pick another seed"
    errors: list[str] = []
    session = ViewSession([sample_runs.run_a, sample_runs.run_b])
    with LiveViewer(session) as live:
        page = new_page(browser, errors, live.url)
        page.goto("/")
        assert "Tool Recognition" in page.inner_text("[data-testid=counts-r0]")
        page.click("[data-testid=nav-items]")
        page.wait_for_selector("[data-testid=row]")
        page.select_option("[data-testid=f-task]", "tools")
        page.select_option("[data-testid=f-outcome]", "wrong")
        page.select_option("[data-testid=f-run]", "r0")
        page.wait_for_function(
            f"() => document.querySelector('[data-testid=count]').textContent.startsWith('{len(wrong)} of')"
        )
        shown = page.eval_on_selector_all("[data-testid=row]", "rows => rows.map(r => r.dataset.id)")
        assert shown == wrong
        outcomes = page.eval_on_selector_all(
            "[data-testid=row]", "rows => rows.map(r => r.querySelector('.c-run').dataset.outcome)"
        )
        assert set(outcomes) == {"wrong"}
        assert "outcome=wrong" in page.url and "run=r0" in page.url  # the filtered list is a link

        page.click(f"[data-testid=row][data-id='{wrong[0]}']")
        page.wait_for_selector("[data-testid=run-r0] [data-testid=frames][data-source=cache]")
        sent = recorded[wrong[0]]["frames"]
        assert [int(f["index"]) for f in _frames(page, "r0")] == [f["index"] for f in sent]
        assert [round(float(f["time"]), 3) for f in _frames(page, "r0")] == [
            round(f["time"], 3) for f in sent
        ]
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=run-r0] [data-testid=frame] img')].every(i => i.complete && i.naturalWidth === 224)"
        )
        # Run B answered the same item with no frame cache: its frames were re-sampled, and say so.
        page.wait_for_selector("[data-testid=run-r1] [data-testid=frames][data-source=resampled]")
        assert [int(f["index"]) for f in _frames(page, "r1")] == [
            f["index"] for f in recorded_b[wrong[0]]["frames"]
        ]
        assert page.inner_text("[data-testid=run-r0] [data-testid=outcome]") == "wrong"
        assert page.inner_text("[data-testid=gold]") == json.loads(
            next(line for line in (sample_runs.data / "annotations/level1/tools.jsonl").read_text().splitlines()
                 if json.loads(line)["id"] == int(wrong[0].split("/")[1]))
        )["answer"]  # fmt: skip
        prompt = recorded[wrong[0]]["meta"]["prompt"]
        page.click("[data-testid=run-r0] [data-testid=prompt-block] summary")
        assert page.inner_text("[data-testid=run-r0] [data-testid=prompt]") == prompt
        assert page.inner_text("[data-testid=run-r0] [data-testid=rule]") == "boxed"
        assert page.get_attribute("[data-testid=player]", "src").startswith("video?id=")

        # Keyboard: next, previous, back to the list with the filter kept.
        if len(wrong) > 1:
            page.keyboard.press("j")
            page.wait_for_function(
                f"() => document.querySelector('[data-testid=item-id]').textContent === '{wrong[1]}'"
            )
            page.keyboard.press("k")
            page.wait_for_function(
                f"() => document.querySelector('[data-testid=item-id]').textContent === '{wrong[0]}'"
            )
        page.keyboard.press("Escape")
        page.wait_for_selector("[data-testid=row]")
        assert page.input_value("[data-testid=f-outcome]") == "wrong"

        # A deep link opens the item directly, in a fresh page.
        level3 = "experimental_conclusion/0"
        other = new_page(browser, errors, live.url)
        other.goto("/#/item/" + level3.replace("/", "%2F"))
        other.wait_for_selector("[data-testid=run-r0] [data-testid=frames]")
        assert other.inner_text("[data-testid=item-id]") == level3
        assert len(_frames(other, "r0")) == len(recorded[level3]["frames"])
        judged = _latest(sample_runs.run_a / "judgments.jsonl")[level3]
        verdicts = other.eval_on_selector_all(
            "[data-testid=run-r0] [data-testid=blanks] tr td:last-child",
            "cells => cells.map(c => c.textContent)",
        )
        assert verdicts == ["right" if v else "wrong" for v in judged["verdicts"]]
        assert other.inner_text("[data-testid=run-r1] [data-testid=outcome]") == "absent"
        # next failure from the first item of the unfiltered list
        other.goto("/#/item/tools%2F0")
        other.wait_for_selector("[data-testid=item-id]")
        other.keyboard.press("n")
        first_failure = next(
            row for row in (json.loads(line) for line in (sample_runs.run_a / "item_scores.jsonl").read_text().splitlines())
            if row["item_id"] != "tools/0" and row["earned"] < row["possible"]
        )["item_id"]  # fmt: skip
        other.wait_for_function(
            f"() => document.querySelector('[data-testid=item-id]').textContent === '{first_failure}'"
        )
    assert errors == []


def test_a_growing_run_updates_in_the_page(browser: Any, sample_runs: SampleRuns, tmp_path: Path) -> None:
    run = tmp_path / "growing"
    run.mkdir()
    shutil.copy(sample_runs.run_a / "manifest.json", run)
    lines = (sample_runs.run_a / "predictions.jsonl").read_bytes().splitlines(keepends=True)
    (run / "predictions.jsonl").write_bytes(b"".join(lines[:3]) + lines[3][:25])
    errors: list[str] = []
    with LiveViewer(ViewSession([run], min_refresh_s=0)) as live:
        page = new_page(browser, errors, live.url)
        page.goto("/#/items?outcome=unscored")
        page.wait_for_function(
            "() => document.querySelector('[data-testid=count]').textContent.startsWith('3 of')"
        )
        with (run / "predictions.jsonl").open("ab") as handle:
            handle.write(lines[3][25:] + b"".join(lines[4:7]))
        page.wait_for_function(
            "() => document.querySelector('[data-testid=count]').textContent.startsWith('7 of')",
            timeout=20_000,
        )
        assert "updated" in page.inner_text("[data-testid=live]")
    assert errors == []


def test_static_export_opens_from_a_file(browser: Any, sample_runs: SampleRuns, tmp_path: Path) -> None:
    out = tmp_path / "share" / "view.html"
    session = ViewSession([sample_runs.run_a, sample_runs.run_b])
    export_html(session, out, thumb_size=96)
    recorded = _latest(sample_runs.run_a / "predictions.jsonl")
    errors: list[str] = []
    page = new_page(browser, errors)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(out.as_uri() + "#/items?task=materials")
    page.wait_for_selector("[data-testid=row]")
    shown = page.eval_on_selector_all("[data-testid=row]", "rows => rows.map(r => r.dataset.id)")
    assert shown == sorted(
        (i for i in recorded if i.startswith("materials/")), key=lambda i: int(i.split("/")[1])
    )
    page.click("[data-testid=row][data-id='materials/1']")
    page.wait_for_selector("[data-testid=run-r0] [data-testid=frames]")
    assert [int(f["index"]) for f in _frames(page, "r0")] == [
        f["index"] for f in recorded["materials/1"]["frames"]
    ]
    sizes = page.eval_on_selector_all(
        "[data-testid=run-r0] [data-testid=frame] img",
        "imgs => imgs.map(i => [i.src.slice(0, 5), i.naturalWidth])",
    )
    assert sizes and all(
        src == "data:" and 0 < width <= 96 for src, width in sizes
    )  # small, embedded thumbnails
    assert "not part of the static export" in page.inner_text("[data-testid=item]")
    page.keyboard.press("g")
    page.wait_for_selector("[data-testid=results]", state="visible")
    assert {url.split(":", 1)[0] for url in requests} <= {"file", "data"}
    assert errors == []
