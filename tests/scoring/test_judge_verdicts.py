"""Reading verdict lists out of real-world judge replies."""

from __future__ import annotations

import re

import pytest

from expvid.scoring.judges import VerdictError, parse_verdicts


@pytest.mark.parametrize(
    ("reply", "verdicts"),
    [
        ('{"verdicts": [true, false]}', [True, False]),
        ('```json\n{"verdicts": [true, false]}\n```', [True, False]),
        ('Here is my decision:\n{"verdicts": [false, true]}\nThe second blank matches.', [False, True]),
        ("{'verdicts': [True, False]}", [True, False]),
        ('{"verdicts": ["yes", "no"]}', [True, False]),
        ('{"verdicts": ["correct", "incorrect"]}', [True, False]),
        ('{"verdicts": [1, 0]}', [True, False]),
        ('{"verdicts": [true, false,]}', [True, False]),
        ("[true, true]", [True, True]),
        ('<think>Blank 1 is {"verdicts": [false, false]}?</think>{"verdicts": [true, true]}', [True, True]),
        ('Example: {"verdicts": [true, false, true]}. Mine: {"verdicts": [false, false]}', [False, False]),
        ('{"verdict": [true, false]}', [True, False]),
        ('{"reason": "blank {1} is fine", "verdicts": [true, false]}', [True, False]),
    ],
)
def test_parse_verdicts(reply: str, verdicts: list[bool]) -> None:
    assert parse_verdicts(reply, 2) == verdicts


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "empty"),
        (None, "empty"),
        ("Both are correct.", "no JSON object"),
        ('{"verdicts": [true]}', "1 verdict(s) where 2 were asked for"),
        ('{"verdicts": ["maybe", true]}', "non-boolean"),
        ('{"answer": "true"}', "no JSON object"),
        ("<think>[true, true]</think>", "only reasoning"),
    ],
)
def test_parse_verdicts_rejects(reply: str | None, message: str) -> None:
    with pytest.raises(VerdictError, match=re.escape(message)):
        parse_verdicts(reply, 2)
