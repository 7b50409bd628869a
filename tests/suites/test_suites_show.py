"""`expvid suites show NAME` lists every frame preset of a suite, with what each sets."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.registry import suite_class, suite_names

runner = CliRunner()


@pytest.mark.parametrize("name", [name for name in suite_names() if suite_class(name).frame_presets])
def test_every_frame_preset_is_listed(name: str) -> None:
    presets = suite_class(name).frame_presets
    shown = runner.invoke(app, ["suites", "show", name])
    assert shown.exit_code == 0, shown.output
    _, _, listing = shown.output.partition("frame presets (-S frame_preset=NAME; ")
    assert listing.startswith(f"{len(presets)};")
    listed = [n.strip() for line in listing.splitlines()[1:] for n in line.partition(":")[0].split(",")]
    assert sorted(listed) == sorted(presets)  # each name once


def test_a_preset_line_says_what_it_sets() -> None:
    text = runner.invoke(app, ["suites", "show", "promqa"]).output
    assert "\n  qwen2-vl: at most 100 frames; longest side 597 px\n" in text
    text = runner.invoke(app, ["suites", "show", "expvid"]).output
    assert re.search(r"\n  claude-sonnet-4, claude: L1 8, L2 32, L3 96 frames\n", text)
    text = runner.invoke(app, ["suites", "show", "mmvu"]).output
    assert "\n  qwen2-vl, videollama2, llava-onevision, internvideo2: 1 fps\n" in text
