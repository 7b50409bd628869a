"""The official mm:ss -> "frame N" rewrite, quirks included, pinned with concrete strings."""

from __future__ import annotations

import pytest

from expvid.suites.scivideobench.timestamps import times_to_frames


@pytest.mark.parametrize(
    ("question", "rewritten"),
    [
        # a ratio is read as a time: 1 min 50 s
        ("Dilute the stock 1:50 in buffer.", "Dilute the stock frame 110 in buffer."),
        ("Why is the tube kept on ice at 00:12?", "Why is the tube kept on ice at frame 12?"),
        ("What starts at 02:31?", "What starts at frame 151?"),
        # ranges with a hyphen or an en dash, spaces allowed
        ("Between 06:15–06:36 the cells divide.", "Between frame 375 to frame 396 the cells divide."),
        ("During 0:04 - 0:09 buffer is added", "During frame 4 to frame 9 buffer is added"),
        # a time followed by a dash (not a range) is left as written
        ("At 0:20 - just before the end - what?", "At 0:20 - just before the end - what?"),
        # any digit pair around a colon matches, wherever it starts
        ("Code 123:45 on the label", "Code 1frame 1425 on the label"),
        ("At 1:75 exactly", "At frame 135 exactly"),
        ("No times here.", "No times here."),
    ],
)
def test_official_rewrite(question: str, rewritten: str) -> None:
    assert times_to_frames(question, 484.7) == rewritten


def test_frame_number_is_whole_seconds_whatever_the_duration() -> None:
    for duration in (1.0, 59.9, 600.0, 6000.4):
        assert times_to_frames("at 10:00", duration) == "at frame 600"


def test_a_video_under_one_second_is_refused_not_divided_by() -> None:
    with pytest.raises(ValueError, match="under one second"):
        times_to_frames("at 0:01", 0.5)
