"""Two runs side by side in Debian's headless Chromium, as a newcomer first sees them.

A served model's run is labelled with its name (the spec and URL in a tooltip); "where the runs
agree" counts every item once, so it sums to the items; a Level-3 item's reply comes before its
frames, which are folded when there are many; the narration says how to send it today.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_support import LiveViewer, SampleRuns, expvid, new_page

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.view import ViewSession

LEVEL3 = "experimental_conclusion/0"
REPLY = "Looking at the final frames, the yield is \\boxed{4, edge}"


def _answer(request: RecordedRequest) -> Reply:
    prompt = request.texts[-1] if request.texts else ""
    return Reply.ok(REPLY if "fill-in-the-blank" in prompt else "\\boxed{B}")


@pytest.fixture(scope="module")
def served_run(
    sample_runs: SampleRuns, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, str]]:
    """A served model's run: two tools items (8 frames) and two Level-3 items with 24 frames each."""
    out = tmp_path_factory.mktemp("served") / "run"
    with LoopbackServer(_answer) as server:
        spec = f"openai:lab-vlm-7b@{server.openai_base_url}"
        done = expvid("eval", "--data", str(sample_runs.data), "--model", spec, "--out", str(out),
                      "--tasks", "tools,experimental_conclusion", "--limit", "2", "--frames", "L1=8,L3=24",
                      "--cache-dir", str(sample_runs.cache_a), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    yield out, spec


def test_names_agreement_and_a_level3_reply_before_its_frames(
    browser: Any, sample_runs: SampleRuns, served_run: tuple[Path, str]
) -> None:
    served, spec = served_run
    errors: list[str] = []
    with LiveViewer(ViewSession([served, sample_runs.run_a])) as live:
        page = new_page(browser, errors, live.url)
        page.goto("/")
        page.wait_for_selector("[data-testid=pairs]")

        # The row says the model's name; the spec with its URL is the tooltip.
        model = page.locator("[data-testid=results] td.model").first
        assert model.inner_text() == "lab-vlm-7b (partial)" and model.get_attribute("title") == spec
        assert "http://" not in page.inner_text("[data-testid=results]")
        assert page.get_attribute("[data-testid=run-r0] .chip.r0", "title") == spec

        # Every item once: the counts sum to the items; "disagree" is a subset, shown apart.
        items = int(re.search(r"(\d+) items", page.inner_text("h1")).group(1))  # type: ignore[union-attr]
        cells = page.eval_on_selector_all(
            "[data-testid=pairs] tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
        )
        counts = {row[0]: int(row[1]) for row in cells if len(row) == 2 and row[1].isdigit()}
        parts = ["both correct", "only lab-vlm-7b", "only random", "neither", "not comparable"]
        assert sum(counts[name] for name in parts) == counts["all items"] == items
        disagree = int(page.inner_text("[data-testid=pair-disagree]"))
        assert 0 < disagree <= items - counts["not comparable"] - counts["both correct"]

        # A Level-3 item: the reply comes first; its 24 frames are folded below it.
        page.goto("/#/item/" + LEVEL3.replace("/", "%2F"))
        page.wait_for_selector("[data-testid=run-r0] [data-testid=frames]", state="attached")
        column = "[data-testid=run-r0] "
        assert page.inner_text(column + "[data-testid=response]") == REPLY
        assert page.eval_on_selector(column + "[data-testid=frames-block]", "d => d.open") is False
        assert page.inner_text(column + "[data-testid=frames-block] summary") == "FRAMES SENT (24)"
        reply = page.locator(column + "[data-testid=response]").bounding_box()
        folded = page.locator(column + "[data-testid=frames-block]").bounding_box()
        assert reply["y"] + reply["height"] < 900  # the reply on the first screen (900 px high) ...
        assert folded["y"] > reply["y"] and folded["height"] < 60  # ... the frames below it, one line
        page.click(column + "[data-testid=frames-block] summary")
        assert page.locator(column + "[data-testid=frame]").count() == 24
        assert page.locator(column + "[data-testid=frame]").first.is_visible()

        # A Level-1 item's 8 frames are open at once, still after the reply.
        page.goto("/#/item/tools%2F0")
        page.wait_for_selector(column + "[data-testid=frames][data-source=cache]")
        assert page.eval_on_selector(column + "[data-testid=frames-block]", "d => d.open") is True
        narration = page.inner_text("[data-testid=item] .question details summary")
        assert "-S with_asr=true" in narration and "--with-asr" not in narration
    assert errors == []
