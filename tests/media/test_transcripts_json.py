"""JSON (ASR) transcripts: whisper / faster-whisper / WhisperX shapes, word times, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from expvid.media.sentences import segment_sentences
from expvid.media.transcripts import Cue, TranscriptError, Word, read_transcript, write_transcript

WHISPER_RESULT: dict[str, Any] = {
    "text": " Add 0.1 M NaCl to the tube. Then vortex.",
    "language": "en",
    "segments": [
        {
            "id": 0,
            "seek": 0,
            "start": 0.0,
            "end": 2.6,
            "text": " Add 0.1 M NaCl to the tube.",
            "avg_logprob": -0.2,
            "words": [
                {"word": " Add", "start": 0.24, "end": 0.5, "probability": 0.98},
                {"word": " 0.1", "start": 0.5, "end": 0.9, "probability": 0.9},
                {"word": " M", "start": 0.9, "end": 1.1, "probability": 0.9},
                {"word": " NaCl", "start": 1.1, "end": 1.6, "probability": 0.9},
                {"word": " to", "start": 1.6, "end": 1.8, "probability": 0.9},
                {"word": " the", "start": 1.8, "end": 1.9, "probability": 0.9},
                {"word": " tube.", "start": 1.9, "end": 2.31, "probability": 0.9},
            ],
        },
        {
            "id": 1,
            "start": 2.6,
            "end": 4.0,
            "text": " Then vortex.",
            "words": [
                {"word": " Then", "start": 2.84, "end": 3.1},
                {"word": " vortex.", "start": 3.1, "end": 3.72},
            ],
        },
    ],
}


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_whisper_result_with_word_times(tmp_path: Path) -> None:
    transcript = read_transcript(_write_json(tmp_path / "whisper.json", WHISPER_RESULT))
    assert [cue.text for cue in transcript.cues] == ["Add 0.1 M NaCl to the tube.", "Then vortex."]
    assert transcript.cues[0].words is not None
    assert transcript.cues[0].words[0] == Word("Add", 0.24, 0.5)
    assert len(transcript.words()) == 9 and transcript.has_word_times
    sentences = segment_sentences(transcript)
    # From word times: the first word starts at 0.24 although its segment starts at 0.0.
    assert [(s.text, s.start, s.end) for s in sentences] == [
        ("Add 0.1 M NaCl to the tube.", 0.24, 2.31),
        ("Then vortex.", 2.84, 3.72),
    ]


def test_bare_list_and_cues_key_and_text_from_words(tmp_path: Path) -> None:
    segments = [
        {
            "start": 1,
            "end": 2,
            "words": [{"text": "Mix", "start": 1.1, "end": 1.4}, {"text": "well.", "start": 1.4, "end": 1.9}],
        },
        {"start": 0, "end": 1, "text": "First."},
    ]
    bare = read_transcript(_write_json(tmp_path / "bare.json", segments))
    assert [(cue.start, cue.text) for cue in bare.cues] == [(0.0, "First."), (1.0, "Mix well.")]
    keyed = read_transcript(_write_json(tmp_path / "keyed.json", {"cues": segments}))
    assert keyed.cues == bare.cues
    whisper_words = [
        {
            "start": 0,
            "end": 1,
            "words": [{"word": " Spin", "start": 0, "end": 0.5}, {"word": " down.", "start": 0.5, "end": 1}],
        }
    ]
    assert read_transcript(_write_json(tmp_path / "w.json", whisper_words)).text == "Spin down."


def test_words_without_times_are_left_out_not_invented(tmp_path: Path) -> None:
    # WhisperX leaves numbers it could not align without times.
    segment = {
        "start": 0.0,
        "end": 4.0,
        "text": "Add 37 mL now.",
        "words": [
            {"word": "Add", "start": 0.0, "end": 0.4},
            {"word": "37"},
            {"word": "mL", "start": 2.0, "end": 2.5},
            {"word": "now.", "start": 3.0, "end": 3.5},
        ],
    }
    transcript = read_transcript(_write_json(tmp_path / "x.json", {"segments": [segment]}))
    assert [word.text for word in transcript.words()] == ["Add", "mL", "now."]
    (sentence,) = segment_sentences(transcript)
    assert (sentence.start, sentence.end) == (0.0, 3.5)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"segments": [{"start": 0, "end": 1, "text": "a"}, {"start": "1.0", "end": 2, "text": "b"}]},
            r"cue 2: segments\[1\]\.start",
        ),
        ({"segments": [{"start": 0, "end": -1, "text": "a"}]}, r"cue 1: segments\[0\]\.end"),
        ({"segments": [{"start": 0, "text": "a"}]}, r"segments\[0\] has no 'end'"),
        (
            [{"start": 0, "end": 1, "words": [{"word": "a", "start": 0.5, "end": 0.2}]}],
            r"segments\[0\]\.words\[0\] ends",
        ),
        ([{"start": 0, "end": 1, "words": [{"start": 0, "end": 1}]}], r"words\[0\] needs a string"),
        ({"segments": [{"start": 0, "end": 1, "text": 5}]}, r"text must be a string"),
        ({"segments": [{"start": 3, "end": 1, "text": "x"}]}, r"cue 1: cue ends at 1.000s, before it starts"),
        ({"results": []}, r'expected \{"segments"'),
    ],
)
def test_bad_values_name_file_and_json_path(tmp_path: Path, data: Any, expected: str) -> None:
    path = _write_json(tmp_path / "bad.json", data)
    with pytest.raises(TranscriptError, match=expected) as caught:
        read_transcript(path)
    assert caught.value.source == path and str(path) in str(caught.value)


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"segments": [\n  {"start": 0, "end": 1, "text": "a"},\n  oops\n]}', encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"broken\.json: line 3: not valid JSON"):
        read_transcript(path)


def test_json_round_trip_keeps_word_times(tmp_path: Path) -> None:
    cues = [
        Cue(0.0, 1.0, "Add buffer.", (Word("Add", 0.1, 0.4), Word("buffer.", 0.4, 0.9))),
        Cue(1.0, 2.0, "Mix."),
    ]
    back = read_transcript(write_transcript(cues, tmp_path / "round.json"))
    assert back.cues == tuple(cues)
