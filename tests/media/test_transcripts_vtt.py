"""WebVTT reading and writing: millisecond precision, markup, YouTube rolling captions, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from expvid.media.sentences import segment_sentences
from expvid.media.transcripts import Cue, TranscriptError, read_transcript, vtt_text, write_vtt

# The shape of a YouTube auto-caption file: two-line roll-up cues, the first line repeating the
# previous cue, inline word timestamps on the new line, and 10 ms "hold" cues between them.
BLANKISH = " "  # YouTube writes a line holding one space where a cue has no previous line
YOUTUBE_VTT = "\n".join(
    [
        "WEBVTT",
        "Kind: captions",
        "Language: en",
        "",
        "00:00:00.000 --> 00:00:02.390 align:start position:0%",
        BLANKISH,
        "first<00:00:00.320><c> we</c><00:00:00.640><c> add</c>"
        "<00:00:01.040><c> the</c><00:00:01.280><c> buffer</c>",
        "",
        "00:00:02.390 --> 00:00:02.400 align:start position:0%",
        "first we add the buffer",
        BLANKISH,
        "",
        "00:00:02.400 --> 00:00:05.120 align:start position:0%",
        "first we add the buffer",
        "to<00:00:02.560><c> the</c><00:00:02.800><c> tube.</c><00:00:03.900><c> Then</c>",
        "",
        "00:00:05.120 --> 00:00:05.130 align:start position:0%",
        "to the tube. Then",
        BLANKISH,
        "",
        "00:00:05.130 --> 00:00:07.000 align:start position:0%",
        "to the tube. Then",
        "mix<00:00:05.600><c> well.</c>",
        "",
    ]
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_millisecond_precision_is_kept(tmp_path: Path) -> None:
    # webvtt-py's start_in_seconds would give 1 and 2 here.
    text = "WEBVTT\n\n00:00:01.999 --> 00:00:02.001\nOne.\n\n01:02.345 --> 01:03.500\nTwo.\n"
    transcript = read_transcript(_write(tmp_path / "ms.vtt", text))
    assert [(cue.start, cue.end) for cue in transcript.cues] == [(1.999, 2.001), (62.345, 63.5)]


def test_markup_is_stripped(tmp_path: Path) -> None:
    text = (
        "\ufeffWEBVTT - lab narration\n\n"
        "STYLE\n::cue { color: yellow }\n\n"
        "NOTE written by hand\n\n"
        "intro\n00:00:00.000 --> 00:00:02.000 line:0 align:start\n"
        "<v Dr. Smith>Add <b>0.1 M</b> <c.highlight>NaCl</c></v>\n\n"
        "00:00:02.000 --> 00:00:04.000\n<v.loud Narrator>Wait<00:00:03.000> approx. 5 min &amp; mix.\n\n"
        "00:00:04.000 --> 00:00:05.000\n<ruby>漢<rt>kan</rt></ruby>&lt;i&gt; literal\n"
    )
    transcript = read_transcript(_write(tmp_path / "markup.vtt", text))
    assert [cue.text for cue in transcript.cues] == [
        "Add 0.1 M NaCl",
        "Wait approx. 5 min & mix.",
        "漢<i> literal",
    ]


def test_youtube_rolling_captions_are_deduplicated_with_word_times(tmp_path: Path) -> None:
    path = _write(tmp_path / "youtube.vtt", YOUTUBE_VTT)
    transcript = read_transcript(path)
    assert transcript.text == "first we add the buffer to the tube. Then mix well."
    assert [cue.text for cue in transcript.cues] == [
        "first we add the buffer",
        "to the tube. Then",
        "mix well.",
    ]
    words = transcript.words()
    assert " ".join(word.text for word in words) == "first we add the buffer to the tube. Then mix well."
    assert len(words) == 11
    assert [(word.start, word.end) for word in words[:3]] == [(0.0, 0.32), (0.32, 0.64), (0.64, 1.04)]
    assert words[-1].end == 7.0
    assert transcript.has_word_times

    raw = read_transcript(path, dedupe=False)
    assert len(raw.cues) == 5 and raw.text.count("buffer") == 3

    sentences = segment_sentences(transcript)
    assert [s.text for s in sentences] == ["first we add the buffer to the tube.", "Then mix well."]
    # Word times, not interpolation: "Then" starts at its inline timestamp.
    assert (sentences[0].start, sentences[0].end) == (0.0, 3.9)
    assert (sentences[1].start, sentences[1].end) == (3.9, 7.0)


def test_malformed_timestamp_names_file_cue_and_line(tmp_path: Path) -> None:
    text = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nOk.\n\n00:00:03.000 --> 00:00:04,000\nBad.\n"
    path = _write(tmp_path / "bad.vtt", text)
    with pytest.raises(TranscriptError) as caught:
        read_transcript(path)
    assert (caught.value.source, caught.value.cue, caught.value.line) == (path, 2, 6)
    assert "00:00:04,000" in str(caught.value)


def test_minutes_out_of_range_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "range.vtt", "WEBVTT\n\n00:75:01.000 --> 00:75:02.000\nText.\n")
    with pytest.raises(TranscriptError, match=r"cue 1: line 3"):
        read_transcript(path)


def test_missing_header_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "header.vtt", "00:00:01.000 --> 00:00:02.000\nText.\n")
    with pytest.raises(TranscriptError, match=r"header\.vtt: line 1: not a WebVTT file"):
        read_transcript(path)


def test_end_before_start_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "back.vtt", "WEBVTT\n\n00:00:03.000 --> 00:00:02.000\nText.\n")
    with pytest.raises(TranscriptError, match=r"back\.vtt: cue 1: line 3: .*before it starts"):
        read_transcript(path)


def test_write_then_read_round_trip_escapes_markup_characters(tmp_path: Path) -> None:
    cues = [Cue(0.5, 1.25, "Keep T < 5 °C & pH > 7 --> done"), Cue(61.001, 3600.0, "<b> is text here")]
    path = write_vtt(cues, tmp_path / "out.vtt")
    written = path.read_text(encoding="utf-8")
    assert written.startswith("WEBVTT\n\n00:00:00.500 --> 00:00:01.250\n")
    assert "&lt;b&gt;" in written and "-&gt;" in written
    back = read_transcript(path)
    assert [(cue.start, cue.end, cue.text) for cue in back.cues] == [(c.start, c.end, c.text) for c in cues]
    assert vtt_text(back) == written
