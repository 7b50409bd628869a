"""Timed sentence segmentation: concrete caption layouts, lab abbreviations, time-mapping rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from expvid.media.sentences import Sentence, _pysbd_cuts, segment_sentences
from expvid.media.transcripts import Cue, Transcript, Word, read_transcript


def _texts(sentences: list[Sentence]) -> list[str]:
    return [sentence.text for sentence in sentences]


def _times(sentences: list[Sentence]) -> list[tuple[float, float]]:
    return [(round(s.start, 6), round(s.end, 6)) for s in sentences]


LAB_SENTENCES = [
    "Add reagents, e.g. buffer and salt, to the tube.",
    "Then mix, i.e. vortex gently.",
    "Dr. Smith prepares 0.1 M NaCl.",
    "As shown in Fig. 2 the cells grow.",
    "Wait approx. 5 minutes.",
    "Compare control vs. treated samples.",
    "Use tube No. 5 for this step.",
    "Pipette 10 µL of the solution.",
    "Pulse for 500 ms.",
    "Bring NaCl to 0.5 M.",
    "The pH is 7.4 at 25 °C.",
    "See Figs. 3-4 and Eq. (2).",
    "Step 1. Add 2.5 mL of water.",
    "Is it clear?",
    "Yes!",
]


def test_lab_abbreviations_and_numbers_do_not_break_sentences() -> None:
    text = " ".join(LAB_SENTENCES)
    sentences = segment_sentences([Cue(0.0, 60.0, text)])
    assert _texts(sentences) == LAB_SENTENCES


def test_sentence_split_across_cues_is_joined_and_timed_by_characters() -> None:
    cues = [
        Cue(10.0, 14.0, "First mix. Add the"),
        Cue(15.0, 17.0, "buffer now."),
        Cue(17.0, 20.0, "Then spin."),
    ]
    sentences = segment_sentences(cues)
    assert _texts(sentences) == ["First mix.", "Add the buffer now.", "Then spin."]
    # "First mix." is 10 of 18 characters of cue 0; "Add" starts at character 11.
    assert sentences[0].start == 10.0
    assert sentences[0].end == pytest.approx(10.0 + 4.0 * 10 / 18)
    assert sentences[1].start == pytest.approx(10.0 + 4.0 * 11 / 18)
    assert sentences[1].end == 17.0 and sentences[2].start == 17.0 and sentences[2].end == 20.0
    assert [s.cue_indices for s in sentences] == [(0,), (0, 1), (2,)]


def test_one_sentence_over_three_cues_and_three_sentences_in_one_cue() -> None:
    cues = [
        Cue(0.0, 2.0, "Carefully transfer the"),
        Cue(2.0, 4.0, "supernatant into a fresh"),
        Cue(4.0, 6.0, "tube. Spin. Mix. Stop."),
    ]
    sentences = segment_sentences(cues)
    assert _texts(sentences) == [
        "Carefully transfer the supernatant into a fresh tube.",
        "Spin.",
        "Mix.",
        "Stop.",
    ]
    assert sentences[0].cue_indices == (0, 1, 2)
    assert sentences[0].start == 0.0
    assert 4.0 < sentences[0].end < sentences[1].start < sentences[1].end < sentences[2].start
    assert sentences[-1].end == 6.0


def test_sentence_after_a_gap_starts_at_the_next_cue() -> None:
    cues = [Cue(0.0, 2.0, "Mix well."), Cue(5.0, 7.0, "Then spin.")]
    assert _times(segment_sentences(cues)) == [(0.0, 2.0), (5.0, 7.0)]


def test_sentence_continuing_over_a_gap_spans_it() -> None:
    cues = [Cue(0.0, 2.0, "Mix the"), Cue(5.0, 7.0, "sample well.")]
    assert _times(segment_sentences(cues)) == [(0.0, 7.0)]


def test_overlapping_cues_are_read_as_consecutive() -> None:
    cues = [Cue(0.0, 4.0, "First sentence."), Cue(2.0, 6.0, "Second one here.")]
    sentences = segment_sentences(cues)
    assert _times(sentences) == [(0.0, 2.0), (2.0, 6.0)]


def test_word_times_take_precedence_over_interpolation() -> None:
    words = (
        Word("Add", 0.5, 0.8),
        Word("it.", 0.8, 1.1),
        Word("Then", 2.6, 2.9),
        Word("mix.", 2.9, 3.3),
    )
    sentences = segment_sentences([Cue(0.0, 4.0, "Add it. Then mix.", words)])
    assert _times(sentences) == [(0.5, 1.1), (2.6, 3.3)]


def test_words_outside_their_cue_are_clamped() -> None:
    words = (Word("Mix", 0.0, 0.4), Word("now.", 0.4, 9.0))
    (sentence,) = segment_sentences([Cue(0.2, 2.0, "Mix now.", words)])
    assert (sentence.start, sentence.end) == (0.2, 2.0)


def test_chinese_full_width_punctuation_and_cue_join_without_space() -> None:
    cues = [Cue(0.0, 3.0, "首先，加入缓冲液。然后"), Cue(3.0, 5.0, "混合！可以吗？"), Cue(5.0, 6.0, "可以。")]
    sentences = segment_sentences(cues, language="zh")
    assert _texts(sentences) == ["首先，加入缓冲液。", "然后混合！", "可以吗？", "可以。"]
    assert sentences[1].cue_indices == (0, 1)
    assert sentences[1].start == pytest.approx(3.0 * 9 / 11)
    # Full-width punctuation also ends sentences with the default language.
    assert _texts(segment_sentences(cues)) == _texts(sentences)


def test_unpunctuated_text_is_one_sentence_unless_max_duration_splits_it() -> None:
    cues = [Cue(float(i) * 3, float(i) * 3 + 3, f"step {i} add buffer then mix") for i in range(10)]
    (whole,) = segment_sentences(cues)
    assert (whole.start, whole.end) == (0.0, 30.0)
    parts = segment_sentences(cues, max_duration=7.0)
    assert len(parts) > 4
    assert all(part.duration <= 7.0 + 1e-9 for part in parts)
    assert " ".join(_texts(parts)) == whole.text
    # A cue boundary is preferred to a break inside a cue.
    assert all(part.start in {c.start for c in cues} for part in parts)


def test_max_duration_prefers_clause_marks() -> None:
    cue = Cue(0.0, 12.0, "Add the buffer slowly, then mix the tube well and finally spin it down")
    parts = segment_sentences([cue], max_duration=8.0)
    assert _texts(parts)[0] == "Add the buffer slowly,"
    assert all(part.duration <= 8.0 for part in parts)


def test_min_words_merges_short_fragments_into_the_closer_neighbour() -> None:
    cues = [
        Cue(0.0, 1.0, "Okay."),
        Cue(1.0, 4.0, "Now add the buffer."),
        Cue(4.0, 5.0, "Good."),
        Cue(9.0, 12.0, "Next we spin the tube."),
    ]
    assert len(segment_sentences(cues)) == 4
    merged = segment_sentences(cues, min_words=2)
    assert _texts(merged) == ["Okay. Now add the buffer. Good.", "Next we spin the tube."]
    assert _times(merged) == [(0.0, 5.0), (9.0, 12.0)]


def test_min_duration_merges_short_sentences() -> None:
    cues = [Cue(0.0, 0.5, "Hi."), Cue(0.5, 4.0, "Add the buffer."), Cue(6.0, 6.4, "Done.")]
    merged = segment_sentences(cues, min_duration=1.0)
    assert _texts(merged) == ["Hi. Add the buffer. Done."]


def test_empty_transcript_and_bad_arguments() -> None:
    assert segment_sentences(Transcript(cues=())) == []
    with pytest.raises(ValueError, match="max_duration"):
        segment_sentences([Cue(0, 1, "x")], max_duration=0)
    with pytest.raises(ValueError):
        segment_sentences([Cue(0, 1, "x")], language="xx-not-a-language")


def test_unsorted_cue_sequence_is_sorted_first() -> None:
    cues = [Cue(2.0, 3.0, "Second."), Cue(0.0, 1.0, "First.")]
    assert _texts(segment_sentences(cues)) == ["First.", "Second."]


def test_srt_file_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "narration.srt"
    path.write_text(
        "1\n00:00:00,500 --> 00:00:03,000\nFirst, add 10 µL of 0.1 M NaCl\n\n"
        "2\n00:00:03,000 --> 00:00:05,500\nto the tube, e.g. with a P20.\n\n"
        "3\n00:00:06,000 --> 00:00:09,000\nThen centrifuge at approx. 500 x g. Discard\n\n"
        "4\n00:00:09,000 --> 00:00:10,000\nthe supernatant.\n",
        encoding="utf-8",
    )
    sentences = segment_sentences(read_transcript(path))
    assert _texts(sentences) == [
        "First, add 10 µL of 0.1 M NaCl to the tube, e.g. with a P20.",
        "Then centrifuge at approx. 500 x g.",
        "Discard the supernatant.",
    ]
    assert _times(sentences)[0] == (0.5, 5.5)
    assert sentences[1].start == 6.0 and sentences[2].end == 10.0
    assert 6.0 < sentences[1].end < sentences[2].start < 9.0


def test_windowed_pysbd_finds_the_same_cuts_as_one_pass() -> None:
    # Long transcripts are segmented window by window (pysbd is quadratic); the cuts must not change.
    text = " ".join(LAB_SENTENCES[(i * 7) % len(LAB_SENTENCES)] for i in range(60))
    one_pass = _pysbd_cuts(text, "en", window=len(text) + 1)
    assert len(one_pass) >= 59  # raw pysbd cuts, before the lab-narration fixes join some back
    assert _pysbd_cuts(text, "en", window=500) == one_pass
    assert len(segment_sentences([Cue(0.0, 600.0, text)])) == 60
    unpunctuated = "add the buffer and mix " * 80
    assert _pysbd_cuts(unpunctuated, "en", window=300) == _pysbd_cuts(unpunctuated, "en", window=10**6) == []
