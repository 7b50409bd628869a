"""Shared items and judges for the scoring tests.

Items are built the way the ExpVid loader builds them (task stems, `meta["video_id"]`,
disciplines), with small but realistic questions. The offline judge is session-scoped: loading
the MiniLM model takes seconds, so it happens once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from expvid.schema import AnswerType, Item
from expvid.scoring.judges import OfflineBlankJudge

DATA = Path(__file__).parent / "data"

STEP_LIST_QUESTION = (
    "Given all steps of the experiment, please predict the next operation that will take place after "
    "this video segment.\nFull Step List:\nCut high purity copper foil into 4×4 cm pieces\n"
    "2. Draw a line 0.5 cm from one edge of each square foil\n3. Heat the foil to 37. Then let it cool\n"
    "4. Rinse the foil three times with ethanol\n5. Dry the foil under nitrogen\n"
    "6. Mount the foil in the permeation cell\n7. Calculate permeance from the mass spectrum"
)

BLANK_QUESTION = (
    "Title: A General Copper-Based Photoredox Catalyst\nDiscipline: Chemistry\nQuestion: In this study, "
    "the direct C2 arylation of N-methylpyrrole with 4-iodobenzonitrile at room temperature proceeded "
    "using _____ under _____ irradiation to afford the product in _____ yield after _____."
)


def _item(**fields: Any) -> Item:
    base: dict[str, Any] = {
        "suite": "expvid",
        "level": 1,
        "discipline": "Chemistry",
        "meta": {"video_id": "v1"},
    }
    base.update(fields)
    return Item(**base)


@pytest.fixture
def choice_item() -> Item:
    return _item(
        id="materials/1",
        task="materials",
        question="Which material is added to the tube?",
        options={"A": "agarose beads", "B": "sepharose beads", "C": "60°C water bath", "D": "Vitamin D"},
        answer="B",
        answer_type=AnswerType.CHOICE,
    )


@pytest.fixture
def ten_option_item() -> Item:
    return _item(
        id="video_verification/1",
        task="video_verification",
        level=2,
        question="Given the complete step list, which step was not performed in the video?",
        options={letter: str(i + 1) for i, letter in enumerate("ABCDEFGHIJ")},
        answer="I",
        answer_type=AnswerType.CHOICE,
    )


@pytest.fixture
def step_item() -> Item:
    return _item(
        id="step_prediction/1",
        task="step_prediction",
        level=2,
        question=STEP_LIST_QUESTION,
        answer=4,
        answer_type=AnswerType.STEP_NUMBER,
    )


@pytest.fixture
def sequence_item() -> Item:
    return _item(
        id="sequence_generation/1",
        task="sequence_generation",
        level=2,
        question="Based on the full step list, determine the step numbers shown in the video.\n"
        + STEP_LIST_QUESTION,
        answer=[3, 4, 5],
        answer_type=AnswerType.STEP_SEQUENCE,
    )


@pytest.fixture
def blank_item() -> Item:
    return _item(
        id="experimental_conclusion/1",
        task="experimental_conclusion",
        level=3,
        question=BLANK_QUESTION,
        answer=["[(DPEPhos)(bcp)Cu]PF6", "visible light", "85%", "24 h"],
        answer_type=AnswerType.BLANKS,
    )


@pytest.fixture
def make_item() -> Callable[..., Item]:
    return _item


@pytest.fixture(scope="session")
def offline_judge() -> OfflineBlankJudge:
    judge = OfflineBlankJudge()
    judge.load()
    return judge
