"""Property tests: however captions cut a known narration, the same sentences come back, timed inside
the right cues (by interpolation) or exactly at word times (when words are timed)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expvid.media.sentences import segment_sentences
from expvid.media.transcripts import Cue, Word

NARRATION = [
    "First, add 10 µL of 0.1 M NaCl to the tube.",
    "Dr. Lee uses a buffer, e.g. PBS, at pH 7.4.",
    "Then vortex the sample for approx. 5 s, i.e. briefly.",
    "As shown in Fig. 2, the pellet forms at the bottom.",
    "Compare treated vs. untreated wells in plate No. 5.",
    "Incubate for 30 min at 37 °C.",
    "Is the solution clear?",
    "Yes!",
]


@dataclass
class Layout:
    """Sentences, the words they are made of, and cues built from consecutive runs of those words."""

    sentences: list[str]
    words: list[str]
    sentence_of_word: list[int]
    cue_of_word: list[int]
    cues: list[Cue]


@st.composite
def layouts(draw: st.DrawFn, *, timed_words: bool) -> Layout:
    sentences = draw(st.lists(st.sampled_from(NARRATION), min_size=1, max_size=5))
    words: list[str] = []
    sentence_of_word: list[int] = []
    for index, sentence in enumerate(sentences):
        for word in sentence.split(" "):
            words.append(word)
            sentence_of_word.append(index)
    cuts = sorted(draw(st.sets(st.integers(1, len(words) - 1)))) if len(words) > 1 else []
    bounds = list(zip([0, *cuts], [*cuts, len(words)], strict=True))
    cues: list[Cue] = []
    cue_of_word: list[int] = []
    time = draw(st.floats(0, 100, allow_nan=False))
    for cue_index, (first, last) in enumerate(bounds):
        time += draw(st.sampled_from([0.0, 0.0, 0.25, 3.0]))  # often contiguous, sometimes a gap
        start = time
        timed: list[Word] = []
        for _ in range(first, last):
            if timed_words:
                time += draw(st.sampled_from([0.0, 0.05, 0.4]))  # pause before the word
            duration = draw(st.floats(0.05, 1.0, allow_nan=False))
            timed.append(Word(words[len(cue_of_word)], time, time + duration))
            cue_of_word.append(cue_index)
            time += duration
        cues.append(Cue(start, time, " ".join(words[first:last]), tuple(timed) if timed_words else None))
    return Layout(sentences, words, sentence_of_word, cue_of_word, cues)


def _word_span(layout: Layout, sentence_index: int) -> tuple[int, int]:
    indices = [i for i, owner in enumerate(layout.sentence_of_word) if owner == sentence_index]
    return indices[0], indices[-1]


@settings(max_examples=50, deadline=None)
@given(layouts(timed_words=False))
def test_random_cue_splits_give_the_same_sentences_inside_the_right_cues(layout: Layout) -> None:
    result = segment_sentences(layout.cues)
    assert [s.text for s in result] == layout.sentences
    previous_end = layout.cues[0].start
    for index, sentence in enumerate(result):
        first_word, last_word = _word_span(layout, index)
        first_cue = layout.cues[layout.cue_of_word[first_word]]
        last_cue = layout.cues[layout.cue_of_word[last_word]]
        assert first_cue.start <= sentence.start <= first_cue.end
        assert last_cue.start <= sentence.end <= last_cue.end
        assert previous_end <= sentence.start <= sentence.end
        previous_end = sentence.end
        assert sentence.cue_indices == tuple(
            range(layout.cue_of_word[first_word], layout.cue_of_word[last_word] + 1)
        )
        # A sentence that begins a cue starts with it; one that ends a cue ends with it.
        if first_word == 0 or layout.cue_of_word[first_word - 1] != layout.cue_of_word[first_word]:
            assert sentence.start == pytest.approx(first_cue.start)
        if (
            last_word == len(layout.words) - 1
            or layout.cue_of_word[last_word + 1] != layout.cue_of_word[last_word]
        ):
            assert sentence.end == pytest.approx(last_cue.end)


@settings(max_examples=40, deadline=None)
@given(layouts(timed_words=True))
def test_with_word_times_sentences_start_and_end_exactly_on_their_words(layout: Layout) -> None:
    result = segment_sentences(layout.cues)
    assert [s.text for s in result] == layout.sentences
    timed = [word for cue in layout.cues for word in (cue.words or ())]
    for index, sentence in enumerate(result):
        first_word, last_word = _word_span(layout, index)
        assert sentence.start == pytest.approx(timed[first_word].start)
        assert sentence.end == pytest.approx(timed[last_word].end)


@settings(max_examples=30, deadline=None)
@given(layouts(timed_words=False), st.floats(0.5, 8.0))
def test_max_duration_bounds_every_piece_and_loses_no_text(layout: Layout, limit: float) -> None:
    result = segment_sentences(layout.cues, max_duration=limit)
    assert " ".join(s.text for s in result).split() == layout.words
    longest_word = max(cue.duration for cue in layout.cues)  # a single word can exceed the limit
    for previous, sentence in itertools.pairwise(result):
        assert previous.end <= sentence.start
    for sentence in result:
        assert sentence.duration <= max(limit, longest_word) + 1e-9


_FRAGMENTS = st.sampled_from(
    ["Add", "e.g.", "0.1", "M", "µL", "Fig.", "2", "No.", "approx.", "Dr.", "vs.", "i.e.", "pH", "7.4",
     "the", "tube", ".", "!", "?", "。", "加入", "缓冲液", "\"", ")", "(", "...", ",", "Step", "1.", "ms."]
)  # fmt: skip


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(_FRAGMENTS, min_size=1, max_size=8), st.floats(0, 3), st.floats(0, 4)),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([None, 2.0]),
    st.sampled_from([None, 3]),
)
def test_any_text_keeps_every_character_and_monotone_times(
    raw: list[tuple[list[str], float, float]], max_duration: float | None, min_words: int | None
) -> None:
    cues: list[Cue] = []
    time = 0.0
    for fragments, gap, duration in raw:
        time += gap
        cues.append(Cue(time, time + duration, " ".join(fragments)))
        time += duration
    result = segment_sentences(cues, max_duration=max_duration, min_words=min_words)
    assert "".join("".join(s.text.split()) for s in result) == "".join("".join(c.text.split()) for c in cues)
    previous_end = cues[0].start
    for sentence in result:
        assert sentence.text == sentence.text.strip() and sentence.text
        assert previous_end <= sentence.start <= sentence.end <= cues[-1].end
        previous_end = sentence.end
