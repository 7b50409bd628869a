"""MMVU's prompts as the released code sends them (`utils/constant.py`), written out here in full."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from expvid.suites.mmvu import MMVUSuite
from expvid.suites.settings import SettingsError

COT_MC = (
    "\nQuestion: Assume that 2.24 liters of gas fully participates in the reaction shown in the video under the "
    "standard temperature and pressure condition, how many grams of precipitate are produced approximately?\n"
    "A: 10.0\nB: 5.0\nC: 12.0\nD: 15.0\nE: 20.0\n\n"
    "Answer the given multiple-choice question step by step. Begin by explaining your reasoning process clearly. "
    "Conclude by stating the final answer using the following format: 'Therefore, the final answer is: $LETTER' "
    "(without quotes), where $LETTER is one of the options. Think step by\nstep before answering."
)
DIRECT_OPEN = (
    "\nQuestion: Which gas is bubbled through the clear solution in the video?\n\n"
    "Do not generate any intermediate reasoning process. Directly output the final short answer.\n"
)


def _item(dataset, item_id):
    return next(item for item in dataset.items if item.id == item_id)


def test_chain_of_thought_is_the_default_and_direct_the_other_setting(mmvu_dataset) -> None:
    assert MMVUSuite().prompt_text(_item(mmvu_dataset, "validation_0")) == COT_MC
    assert MMVUSuite({"prompt": "direct"}).prompt_text(_item(mmvu_dataset, "validation_1")) == DIRECT_OPEN
    cot_open = MMVUSuite().prompt_text(_item(mmvu_dataset, "validation_1"))
    assert cot_open.endswith(
        "using the following format: 'Therefore, the final answer is: 'Answer: $ANSWER' (without quotes), where "
        "$ANSWER is the final answer of the question. Think step by step\nbefore answering."
    )
    direct_mc = MMVUSuite({"prompt": "direct"}).prompt_text(_item(mmvu_dataset, "validation_0"))
    assert direct_mc.endswith("E: 20.0\n\nDo not generate any intermediate reasoning process. Answer directly with "
                              "the option letter from the given choices.\n")  # fmt: skip


def test_decoding_frames_and_settings_follow_the_paper() -> None:
    suite = MMVUSuite()
    assert (suite.generation.temperature, suite.generation.max_tokens) == (1.0, 1024)  # appendix B.1
    frames = suite.resolve_frames(type(suite.frame_presets["gpt-4o"])())
    assert (frames.size, frames.max_side) == (None, None)  # source size, as the official reader
    preset = MMVUSuite({"frame_preset": "Pixtral-12B"}).resolve_frames(type(frames)())
    assert (
        preset.counts == {"all": 8}
        and MMVUSuite({"frame_preset": "qwen2-vl"}).resolve_frames(frames).fps == 1.0
    )
    with pytest.raises(SettingsError, match="mmvu setting prompt='cott'"):
        MMVUSuite({"prompt": "cott"})
    with pytest.raises(SettingsError, match="unknown frame preset 'gpt-5'"):
        MMVUSuite({"frame_preset": "gpt-5"})


def test_mmvu_is_written_only_against_the_public_plugin_api() -> None:
    """A suite package outside expvid would import `expvid.suites.api` and nothing else of expvid."""
    package = Path(MMVUSuite.__module__.replace(".", "/")).parent
    root = Path(__import__("expvid").__file__).parent.parent / package
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("expvid"):
                assert node.module == "expvid.suites.api" or node.module.startswith("expvid.suites.mmvu"), (
                    f"{path.name} imports {node.module}"
                )
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("expvid") for alias in node.names), path.name
