"""SRT reading and writing on real files: BOM, "." separators, markup, broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from expvid.media.transcripts import Cue, TranscriptError, read_transcript, srt_text, write_srt


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_bom_crlf_and_dot_separators(tmp_path: Path) -> None:
    text = (
        "\ufeff1\r\n00:00:01.250 --> 00:00:03.999\r\nAdd 0.1 M NaCl\r\nto the tube.\r\n\r\n"
        "2\r\n00:00:04,000 --> 00:01:02,005\r\nThen vortex.\r\n\r\n"
    )
    transcript = read_transcript(_write(tmp_path / "bom.srt", text))
    assert [(cue.start, cue.end, cue.text) for cue in transcript.cues] == [
        (1.25, 3.999, "Add 0.1 M NaCl to the tube."),
        (4.0, 62.005, "Then vortex."),
    ]
    assert transcript.source == tmp_path / "bom.srt"
    assert transcript.text == "Add 0.1 M NaCl to the tube. Then vortex."
    assert transcript.start == 1.25 and transcript.end == 62.005
    assert transcript.duration == pytest.approx(60.755)


def test_utf16_with_bom(tmp_path: Path) -> None:
    path = _write(tmp_path / "wide.srt", "1\n00:00:01,000 --> 00:00:02,000\nPipette 10 µL.\n", "utf-16")
    assert read_transcript(path).cues[0].text == "Pipette 10 µL."


def test_markup_entities_and_empty_cues_are_cleaned(tmp_path: Path) -> None:
    text = (
        '1\n00:00:01,000 --> 00:00:02,000\n{\\an8}<i>Add</i> <font color="#ff0">the</font> <b>buffer</b>\n\n'
        "2\n00:00:02,000 --> 00:00:03,000\n   \n\n"
        "3\n00:00:03,000 --> 00:00:04,000\n<i></i>\n\n"
        "4\n00:00:04,000 --> 00:00:05,000\n[Music]\n\n"
        "5\n00:00:05,000 --> 00:00:06,000\n>> Keep pH &lt; 8 &amp; T < 5 °C.\n\n"
    )
    transcript = read_transcript(_write(tmp_path / "markup.srt", text))
    assert [cue.text for cue in transcript.cues] == ["Add the buffer", "Keep pH < 8 & T < 5 °C."]
    assert [cue.start for cue in transcript.cues] == [1.0, 5.0]


def test_out_of_order_cues_are_sorted(tmp_path: Path) -> None:
    text = (
        "1\n00:00:05,000 --> 00:00:06,000\nThird.\n\n"
        "2\n00:00:01,000 --> 00:00:02,000\nFirst.\n\n"
        "3\n00:00:03,000 --> 00:00:04,000\nSecond.\n\n"
    )
    transcript = read_transcript(_write(tmp_path / "order.srt", text))
    assert [cue.text for cue in transcript.cues] == ["First.", "Second.", "Third."]


def test_malformed_timestamp_names_file_cue_and_line(tmp_path: Path) -> None:
    text = (
        "1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n"
        "2\n00:00:0x,000 --> 00:00:04,000\nWorld.\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\nAgain.\n"
    )
    path = _write(tmp_path / "bad.srt", text)
    with pytest.raises(TranscriptError) as caught:
        read_transcript(path)
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.source, error.cue, error.line) == (path, 2, 6)
    assert str(path) in str(error) and "cue 2" in str(error) and "line 6" in str(error)


@pytest.mark.parametrize(
    "timing",
    ["00:00:01,5 --> 00:00:02,000", "00:61:01,000 --> 00:62:00,000", "00:00:01,000 --> soon"],
)
def test_ambiguous_or_out_of_range_timestamps_are_errors(tmp_path: Path, timing: str) -> None:
    path = _write(tmp_path / "range.srt", f"1\n{timing}\nText.\n")
    with pytest.raises(TranscriptError, match=r"range\.srt: cue 1: line 2: malformed timestamp"):
        read_transcript(path)


def test_cue_ending_before_it_starts_is_an_error(tmp_path: Path) -> None:
    text = "1\n00:00:01,000 --> 00:00:02,000\nFine.\n\n2\n00:00:05,000 --> 00:00:04,000\nBackwards.\n"
    path = _write(tmp_path / "backwards.srt", text)
    with pytest.raises(TranscriptError) as caught:
        read_transcript(path)
    assert (caught.value.cue, caught.value.line) == (2, 6)
    assert "before it starts" in str(caught.value)


def test_garbage_block_is_an_error_with_its_line(tmp_path: Path) -> None:
    text = (
        "1\n00:00:01,000 --> 00:00:02,000\nHello.\n\nthis is not a cue\n\n"
        "2\n00:00:03,000 --> 00:00:04,000\nMore.\n"
    )
    # srt folds a text-only block into the previous cue (it allows blank lines inside text), so this
    # file is readable; a block with a timing line that srt cannot parse is what must fail.
    assert [cue.text for cue in read_transcript(_write(tmp_path / "ok.srt", text)).cues] == [
        "Hello. this is not a cue",
        "More.",
    ]
    broken = "garbage first line\n1\n00:00:01,000 --> 00:00:02,000\nHello.\n"
    with pytest.raises(TranscriptError, match=r"line 1"):
        read_transcript(_write(tmp_path / "garbage.srt", broken))


def test_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.srt"
    path.write_bytes("1\n00:00:01,000 --> 00:00:02,000\nPipette 10 µL.\n".encode("latin-1"))
    with pytest.raises(TranscriptError, match="not UTF-8"):
        read_transcript(path)


def test_empty_file_gives_empty_transcript(tmp_path: Path) -> None:
    transcript = read_transcript(_write(tmp_path / "empty.srt", ""))
    assert transcript.cues == () and transcript.text == "" and transcript.duration == 0.0


def test_write_then_read_round_trip(tmp_path: Path) -> None:
    cues = [
        Cue(0.0, 1.5, "Add 10 µL of buffer."),
        Cue(1.5, 1.5, "Zero-length cue survives."),
        Cue(2.0004, 3601.2346, "Long one & x<5 > 2 text."),  # "<5" is not a tag
    ]
    path = write_srt(cues, tmp_path / "out.srt")
    assert path.read_text(encoding="utf-8").startswith("1\n00:00:00,000 --> 00:00:01,500\n")
    back = read_transcript(path)
    assert [cue.text for cue in back.cues] == [cue.text for cue in cues]
    assert [(cue.start, cue.end) for cue in back.cues] == [(0.0, 1.5), (1.5, 1.5), (2.0, 3601.235)]
    assert srt_text(back) == path.read_text(encoding="utf-8")
    assert not list(tmp_path.glob(".*tmp")), "atomic write left a temporary file"
