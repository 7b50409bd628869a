"""Properties of extraction over generated replies (hypothesis)."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from expvid.schema import AnswerType, ExtractionStatus, Item
from expvid.scoring.extraction import extract_answer, parse_step_list

LETTERS = "ABCDEFGHIJ"
# Filler text: anything printable but backslashes and braces (those could open a box of their own)
# and "<" (a think tag).
filler = st.text(
    alphabet=st.characters(blacklist_characters="\\{}<", blacklist_categories=["Cs"]), max_size=60
)


@st.composite
def choice_items(draw: st.DrawFn) -> Item:
    n = draw(st.integers(min_value=2, max_value=10))
    texts = draw(
        st.lists(
            st.text(alphabet=string.ascii_lowercase + " ", min_size=3, max_size=20)
            .map(str.strip)
            .filter(bool),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    options = {LETTERS[i]: f"{t} option {i}" for i, t in enumerate(texts)}
    return Item(
        id="p/1",
        suite="expvid",
        task="tools",
        question="q",
        options=options,
        answer="A",
        answer_type=AnswerType.CHOICE,
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(item=choice_items(), before=filler, after=filler, data=st.data())
def test_last_valid_box_wins_anywhere(item: Item, before: str, after: str, data: st.DataObject) -> None:
    letters = list(item.options or {})
    decoy = data.draw(st.sampled_from(letters))
    chosen = data.draw(st.sampled_from(letters))
    reply = f"{before} \\boxed{{{decoy}}} {before} \\boxed{{{chosen}}}{after}"
    extraction = extract_answer(reply, item)
    assert (extraction.status, extraction.value) == (ExtractionStatus.OK, chosen)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(item=choice_items(), reply=st.text(max_size=120))
def test_never_a_letter_outside_the_options(item: Item, reply: str) -> None:
    extraction = extract_answer(reply, item)
    if extraction.status is ExtractionStatus.OK:
        assert extraction.value in (item.options or {})
    else:
        assert extraction.value is None


@settings(max_examples=300)
@given(
    item=choice_items(),
    letter=st.sampled_from(LETTERS),
    wrapper=st.sampled_from(["{}", "({})", "{}.", "{})"]),
)
def test_lone_letter_is_valid_or_reported(item: Item, letter: str, wrapper: str) -> None:
    extraction = extract_answer(wrapper.format(letter), item)
    if letter in (item.options or {}):
        assert extraction.value == letter
    else:
        assert extraction.status is ExtractionStatus.UNPARSEABLE


@settings(max_examples=300)
@given(
    steps=st.lists(st.integers(min_value=1, max_value=99), min_size=1, max_size=12),
    separator=st.sampled_from([", ", ",", "; ", " ", "\n", " → ", "，"]),
)
def test_step_lists_round_trip(steps: list[int], separator: str) -> None:
    parsed = parse_step_list(separator.join(str(s) for s in steps))
    assert parsed == list(dict.fromkeys(steps))


@settings(max_examples=300)
@given(reply=st.text(max_size=200))
def test_extraction_never_raises_and_none_means_failed(reply: str) -> None:
    item = Item(
        id="s/1",
        suite="expvid",
        task="step_prediction",
        question="Full Step List:\nMix\n2. Heat\n3. Cool",
        answer=2,
        answer_type=AnswerType.STEP_NUMBER,
    )
    extraction = extract_answer(reply, item)
    assert extraction.status is not ExtractionStatus.FAILED
    if extraction.ok:
        assert extraction.value in (1, 2, 3)
    assert extract_answer(None, item).status is ExtractionStatus.FAILED
