"""Reasoning blocks are removed before extraction and returned separately."""

from __future__ import annotations

import pytest

from expvid.scoring.extraction import split_reasoning


@pytest.mark.parametrize(
    ("reply", "answer", "reasoning"),
    [
        ("<think>A or B?</think>\\boxed{B}", "\\boxed{B}", "A or B?"),
        ("<thinking>hmm</thinking> Answer: C", "Answer: C", "hmm"),
        ("<THINK>x</THINK>y", "y", "x"),
        ("<think>one</think> mid <think>two</think> end", "mid \n end", "one\n\ntwo"),
        ("<think>cut off by max_tokens \\boxed{A}", "", "cut off by max_tokens \\boxed{A}"),
        ("started mid-thought \\boxed{A}</think>\\boxed{B}", "\\boxed{B}", "started mid-thought \\boxed{A}"),
        ("no reasoning here", "no reasoning here", None),
        ("  spaced  ", "spaced", None),
    ],
)
def test_split_reasoning(reply: str, answer: str, reasoning: str | None) -> None:
    assert split_reasoning(reply) == (answer, reasoning)
