"""The transcript model, text cleaning, rolling-caption de-duplication and format dispatch."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expvid.media.transcript_clean import RawCue, build_transcript
from expvid.media.transcripts import (
    Cue,
    Transcript,
    TranscriptError,
    Word,
    clean_cue_text,
    dedupe_rolling,
    join_cue_texts,
    read_transcript,
    write_transcript,
)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<i>Add</i>  the\nbuffer", "Add the buffer"),
        ("{\\an8}{\\i1}Top line", "Top line"),
        ("<v Dr. Smith>Hello</v> <c.yellow>there</c>", "Hello there"),
        ("word<00:00:01.200><c> next</c>", "word next"),
        ("&lt;b&gt; &amp; &nbsp;x", "<b> & x"),
        ("zero\u200bwidth\u200e mark", "zerowidth mark"),
        (">> Speaker two\n- Dialog line", "Speaker two Dialog line"),
        ("[Music] so now we add [APPLAUSE] it ♪♪", "so now we add it"),
        ("[Ca2+] rises when T < 5 °C and x<3", "[Ca2+] rises when T < 5 °C and x<3"),
        ("-80 °C freezer", "-80 °C freezer"),
        ("   ", ""),
    ],
)
def test_clean_cue_text(raw: str, clean: str) -> None:
    assert clean_cue_text(raw) == clean


def test_model_validates_times() -> None:
    with pytest.raises(ValueError, match="before it starts"):
        Cue(2.0, 1.0, "x")
    with pytest.raises(ValueError, match="finite"):
        Cue(float("nan"), 1.0, "x")
    with pytest.raises(ValueError, match="negative"):
        Word("x", -1.0, 1.0)
    with pytest.raises(ValueError, match="sorted"):
        Transcript(cues=(Cue(2, 3, "b"), Cue(0, 1, "a")))


def test_transcript_error_survives_pickling() -> None:
    error = TranscriptError(Path("a.srt"), "bad timestamp", cue=3, line=9)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.source, copy.reason, copy.cue, copy.line, str(copy)) == (
        Path("a.srt"),
        "bad timestamp",
        3,
        9,
        "a.srt: cue 3: line 9: bad timestamp",
    )


def test_join_keeps_offsets_and_skips_space_between_cjk() -> None:
    text, spans = join_cue_texts(["首先加入缓冲液，", "然后混合。", "Then mix.", "好"])
    assert text == "首先加入缓冲液，然后混合。 Then mix. 好"
    assert [text[a:b] for a, b in spans] == ["首先加入缓冲液，", "然后混合。", "Then mix.", "好"]


def test_transcript_words_and_span() -> None:
    transcript = Transcript(
        cues=(
            Cue(1.0, 2.0, "Add it.", (Word("Add", 1.0, 1.5), Word("it.", 1.5, 2.0))),
            Cue(1.5, 4.0, "Mix."),
        ),
        source=None,
    )
    assert [word.text for word in transcript.words()] == ["Add", "it."]
    assert not transcript.has_word_times  # the second cue has none
    assert (transcript.start, transcript.end, transcript.duration) == (1.0, 4.0, 3.0)


def _cues(*texts: str) -> list[Cue]:
    return [Cue(float(index), float(index + 1), text) for index, text in enumerate(texts)]


def test_rolling_overlap_removed_and_full_repeats_dropped() -> None:
    rolled = dedupe_rolling(
        _cues(
            "we add the buffer", "we add the buffer", "we add the buffer to the tube", "to the tube and mix"
        )
    )
    assert [cue.text for cue in rolled] == ["we add the buffer", "to the tube", "and mix"]
    assert [cue.start for cue in rolled] == [0.0, 2.0, 3.0]


def test_normal_speech_is_not_deduplicated() -> None:
    # One shared word at a boundary is normal speech in a file that is not rolling.
    cues = _cues("Now add the", "the tube goes here.", "Then spin it.", "Mix well.", "Done.")
    assert dedupe_rolling(cues) == cues


def test_rolling_file_removes_single_word_lines() -> None:
    # Every cue repeats the previous line, some lines are one word long: the file is rolling.
    lines = ["first we add", "buffer", "to the tube", "then", "we mix"]
    cues = [Cue(0.0, 1.0, lines[0])] + [
        Cue(float(i), float(i + 1), f"{lines[i - 1]} {lines[i]}") for i in range(1, len(lines))
    ]
    assert [cue.text for cue in dedupe_rolling(cues)] == lines


def test_dedupe_keeps_word_times_of_the_new_words_only() -> None:
    words = (Word("add", 1.0, 1.2), Word("buffer", 1.2, 1.5), Word("then", 1.5, 1.7), Word("mix", 1.7, 2.0))
    cues = [Cue(0.0, 1.0, "we add buffer"), Cue(1.0, 2.0, "add buffer then mix", words)]
    second = dedupe_rolling(cues)[1]
    assert second.text == "then mix"
    assert second.words == words[2:]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=12), st.booleans())
def test_rolling_captions_recover_every_word_exactly_once(line_lengths: list[int], holds: bool) -> None:
    # YouTube-style roll-up: cue i shows line i-1 and line i; optional hold cues repeat line i alone.
    # Words are distinct so the expected answer is unambiguous.
    lines: list[list[str]] = []
    for length in line_lengths:
        start = sum(len(line) for line in lines)
        lines.append([f"w{n}" for n in range(start, start + length)])
    cues: list[Cue] = []
    time = 0.0
    for index, line in enumerate(lines):
        shown = (lines[index - 1] if index else []) + line
        cues.append(Cue(time, time + 2.0, " ".join(shown)))
        time += 2.0
        if holds:
            cues.append(Cue(time, time + 0.01, " ".join(line)))
            time += 0.01
    transcript = build_transcript([RawCue(c.start, c.end, c.text) for c in cues], source=None)
    assert transcript.text.split() == [word for line in lines for word in line]
    assert [cue.text for cue in transcript.cues] == [" ".join(line) for line in lines]


def test_build_transcript_error_names_source_and_cue() -> None:
    with pytest.raises(TranscriptError, match=r"x\.srt: cue 7: line 30: cue ends"):
        build_transcript([RawCue(5.0, 4.0, "late", number=7, line=30)], source=Path("x.srt"))


def test_read_transcript_dispatch_and_errors(tmp_path: Path) -> None:
    cues = [Cue(0.0, 1.0, "One."), Cue(1.0, 2.5, "Two.")]
    for suffix in (".srt", ".vtt", ".json", ".SRT"):
        path = write_transcript(cues, tmp_path / f"t{suffix}")
        assert read_transcript(path).cues == tuple(cues), suffix
    (tmp_path / "t.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"t\.txt: unknown transcript format '\.txt'"):
        read_transcript(tmp_path / "t.txt")
    with pytest.raises(TranscriptError, match=r"missing\.srt: cannot read file"):
        read_transcript(tmp_path / "missing.srt")
    with pytest.raises(TranscriptError, match="unknown transcript format"):
        write_transcript(cues, tmp_path / "t.docx")
