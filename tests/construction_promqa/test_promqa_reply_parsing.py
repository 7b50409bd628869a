"""Reading generators' replies: the official reader on the release, the tolerant one on real styles.

The 401 released responses are all in the prompt's own format; both readers give their released
pairs. Then every response is rewritten the ways models format lists (`reply_styles.py`: CRLF, tabs,
`-` / numbered bullets, `[question]` / `Q1:` tags, quotes, fenced blocks, preambles, closing
remarks): the tolerant reader, the recipe's default, recovers the same pairs with no markup in
them, where the official regular expression recovers few.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reply_styles import STYLES, ReplyStyle, style_of

from expvid.construction.recipes.promqa.parsing import PARSERS, parse_pairs, usable_pairs

Pairs = list[tuple[str, list[str]]]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _read(reply: str, mode: str) -> Pairs:
    return [(p.question, list(p.answers)) for p in parse_pairs(reply, mode)]


def _trimmed(qas: list[dict[str, Any]]) -> Pairs:
    return [(qa["question"].strip(), [a.strip() for a in qa["answers"]]) for qa in qas]


def test_both_readers_give_every_released_response_its_released_pairs(released: list[dict[str, Any]]) -> None:
    assert PARSERS[0] == "tolerant"  # the default
    padded = 0
    for record in released:
        response, qas = record["generation"]["response"], record["generation"]["qas"]
        official = [pair.as_dict() for pair in parse_pairs(response, "official")]
        assert sorted(map(_key, official)) == sorted(map(_key, qas)), record["question_id"]
        # The tolerant reader: the same pairs, in reply order, trimmed (11 released pairs keep the
        # spaces the model left at a line's end).
        assert sorted(map(_key, _read(response, "tolerant"))) == sorted(map(_key, _trimmed(qas)))
        padded += any(qa["question"] != qa["question"].strip() for qa in qas)
    assert padded > 0


def _real_pairs(released: list[dict[str, Any]], index: int) -> Pairs:
    """The released pairs of response `index`, trimmed, in reply order."""
    pairs = _read(released[index % len(released)]["generation"]["response"], "official")
    return [(q.strip(), [a.strip() for a in answers]) for q, answers in pairs]


def test_210_reformattings_official_reads_few_tolerant_reads_all(released: list[dict[str, Any]]) -> None:
    official_right = tolerant_right = tried = 0
    for index in range(400):
        style, pairs = style_of(index), _real_pairs(released, index * 7)
        if not style.readable(pairs) or tried == 210:
            continue
        tried += 1
        reply = style.render(pairs)
        official_right += _read(reply, "official") == pairs
        tolerant_right += _read(reply, "tolerant") == pairs
    assert tried == 210
    assert tolerant_right == 210
    assert official_right == 0  # docs/build_promqa.md says so


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(style=STYLES, pick=st.integers(min_value=0, max_value=400))
def test_any_readable_style_reads_back_to_the_same_pairs_without_markup(
    released: list[dict[str, Any]], style: ReplyStyle, pick: int
) -> None:
    pairs = _real_pairs(released, pick)
    if not style.readable(pairs):
        return
    reply = style.render(pairs)
    assert _read(reply, "tolerant") == pairs, reply
    assert usable_pairs(reply)  # the default reader never re-asks a readable reply


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # The cases, one by one.
        ("* Q1?\r\n    * A1.\r\n* Q2?\r\n    * A2.", [("Q1?", ["A1."]), ("Q2?", ["A2."])]),
        ("* Q1?\n\t* A1.\n\t* A2.", [("Q1?", ["A1.", "A2."])]),
        ("- Q1?\n  - A1.\n- Q2?\n  - A2.", [("Q1?", ["A1."]), ("Q2?", ["A2."])]),
        ("1. Q1?\n   1.1. A1.\n2. Q2?\n   2.1. A2.", [("Q1?", ["A1."]), ("Q2?", ["A2."])]),
        ("[question] Q1?\n[answer] A1.\n[question] Q2?\n[answer] A2.", [("Q1?", ["A1."]), ("Q2?", ["A2."])]),
        ('* "Q1?"\n    * "A1."', [("Q1?", ["A1."])]),
        ("```markdown\n* Q1?\n    * A1.\n```", [("Q1?", ["A1."])]),
        ("Sure, here they are:\n\n* Q1?\n    * A1.\n\nHope this helps!", [("Q1?", ["A1."])]),
        # Tags on their own line, bold tags, lettered lists, plain question lines.
        (
            "1. Q1?\n   Answers:\n   - a1\n   - a2\n2. Q2?\n   Answers:\n   - b1",
            [("Q1?", ["a1", "a2"]), ("Q2?", ["b1"])],
        ),
        ("**Question 1:** Q1?\n**Answer:** A1.", [("Q1?", ["A1."])]),
        (
            "A. Should I stir?\n   - Yes.\nB. Now?\n   - No.",
            [("Should I stir?", ["Yes."]), ("Now?", ["No."])],
        ),
        ("Should I add salt?\n    - Yes, 1/4 teaspoon.", [("Should I add salt?", ["Yes, 1/4 teaspoon."])]),
        # Text that looks like markup but is not: kept as written.
        (
            "* Is 1/2 cup right?\n    * A 5-minute rest first.\n    * A1 sauce works.",
            [("Is 1/2 cup right?", ["A 5-minute rest first.", "A1 sauce works."])],
        ),
        # A closing remark written as a bullet is not a question.
        ("* Q1?\n    * A1.\n* Note: these assume the recipe above.", [("Q1?", ["A1."])]),
    ],
)
def test_tolerant_reader_cases(reply: str, expected: Pairs) -> None:
    assert _read(reply, "tolerant") == expected


def test_the_official_reader_keeps_its_known_faults() -> None:
    """What `-R parser=official` does on the same cases (why it is not the default)."""
    assert _read("* Q1?\r\n    * A1.\r\n", "official") == [("Q1?\r", ["A1."])]
    assert _read("* Q1?\n\t* A1.", "official") == [("Q1?", []), ("A1.", [])]
    assert _read("- Q1?\n  - A1.", "official") == []
    assert _read("* [question] Q1?\n    * [answer] A1.", "official") == [("[question] Q1?", ["[answer] A1."])]
    with pytest.raises(ValueError, match="parsers: tolerant, official"):
        parse_pairs("* Q?\n  * A.", "strict")
