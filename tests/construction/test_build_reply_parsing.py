"""Reading model replies: JSON extraction, the per-prompt schemas, transcript timestamps, step lists."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from expvid.construction.jsontext import MalformedReply, extract_json
from expvid.construction.level2 import check_segments, match_step, read_permutation, split_numbered
from expvid.construction.llm import InvalidReply
from expvid.construction.schemas import (
    FourOptionMCQ,
    OperationAlignment,
    QuantityMCQ,
    SegmentDraft,
    SegmentList,
    StepList,
)
from expvid.construction.timeline import Boundaries, format_time, parse_time
from expvid.media.transcript_model import Cue


@pytest.mark.parametrize(
    "reply, value",
    [
        ('{"tools": ["pipette"]}', {"tools": ["pipette"]}),
        ('<think>maybe {"tools": []}</think>\n{"tools": ["forceps"]}', {"tools": ["forceps"]}),
        ('Sure! Here it is:\n```json\n{"a": 1}\n```\nHope this helps.', {"a": 1}),
        ('{"question": "q", "answer": "A"}\n}', {"question": "q", "answer": "A"}),  # G.1.2's stray brace
        ("[1, 2] trailing words", [1, 2]),
        ("{ null }", None),
        ("null", None),
    ],
)
def test_json_is_found_wherever_models_put_it(reply, value):
    assert extract_json(reply) == value


@pytest.mark.parametrize(
    "reply, message",
    [
        ("I'm sorry, but I can't help with that.", "refusal"),
        ("As an AI, I cannot rate transcripts.", "refusal"),
        ('{"materials": ["unterminated', "does not parse"),
        ("The tools are a pipette and a flask.", "contains no JSON"),
        ("", "empty"),
        ("<think>long thoughts</think>", "only reasoning"),
    ],
)
def test_unusable_replies_say_why(reply, message):
    with pytest.raises(MalformedReply, match=message):
        extract_json(reply)


def test_mcq_schema_demands_four_distinct_options_and_a_known_letter():
    good = FourOptionMCQ.model_validate(
        {"question": " Which? ", "options": {"b": "y", "A": "x", "C": "z", "D": "w"}, "answer": "(a)"}
    )
    assert good.answer == "A" and good.correct == "x" and good.distractors == ["y", "z", "w"]
    assert list(good.options) == ["A", "B", "C", "D"] and good.question == "Which?"
    for bad in (
        {"question": "q", "options": {"A": "x", "B": "y", "C": "z"}, "answer": "A"},
        {"question": "q", "options": {"A": "x", "B": "X ", "C": "z", "D": "w"}, "answer": "A"},
        {"question": "q", "options": {"A": "x", "B": "y", "C": "z", "D": "w"}, "answer": "E"},
        {"question": "", "options": {"A": "x", "B": "y", "C": "z", "D": "w"}, "answer": "A"},
    ):
        with pytest.raises(ValidationError):
            FourOptionMCQ.model_validate(bad)
    assert QuantityMCQ.model_validate({"question": None}).mcq() is None


def test_alignment_rules_of_g16_are_enforced():
    assert OperationAlignment.model_validate(
        {"has_operation": True, "visible_action": True, "alignment_score": 4}
    )
    OperationAlignment.model_validate({"has_operation": False, "visible_action": False, "alignment_score": 0})
    with pytest.raises(ValidationError, match="alignment_score 0"):
        OperationAlignment.model_validate(
            {"has_operation": False, "visible_action": False, "alignment_score": 3}
        )
    with pytest.raises(ValidationError, match=r"1\.\.5"):
        OperationAlignment.model_validate(
            {"has_operation": True, "visible_action": False, "alignment_score": 0}
        )


def test_segment_lists_and_null_step_lists_are_read():
    wrapped = SegmentList.model_validate(
        {"clips": [{"start_time": "00:01.000", "end_time": 30, "title": "t"}]}
    )
    assert len(wrapped.segments) == 1
    assert StepList.model_validate(None).atomic_steps is None


def test_times_parse_in_every_common_spelling():
    assert parse_time("01:02.500") == 62.5
    assert parse_time("1:01:02,250") == 3662.25
    assert parse_time("12.5s") == parse_time(12.5) == 12.5
    assert format_time(62.5) == "01:02.500" and format_time(3662.25) == "1:01:02.250"
    for bad in ("soon", "1:2:3:4", True, -1):
        with pytest.raises(InvalidReply):
            parse_time(bad)  # type: ignore[arg-type]


CUES = [Cue(0.25, 5.0, "a"), Cue(5.0, 9.75, "b"), Cue(10.25, 20.0, "c"), Cue(30.0, 40.0, "d")]


def test_timestamps_snap_to_cue_boundaries_only_within_the_tolerance():
    bounds = Boundaries(CUES, tolerance=0.5)
    assert bounds.snap(9.5, "end").time == 9.75
    with pytest.raises(
        InvalidReply, match=r"start 00:25\.000 is not a timestamp of the transcript .* 5\.00 s away"
    ):
        bounds.snap(25.0, "start")
    # Clip edges go halfway into the silence (capped), or all the way to the video's ends.
    assert bounds.pad_start(10.25) == pytest.approx(10.0)
    assert bounds.pad_end(9.75, ceiling=60) == pytest.approx(10.0)
    assert bounds.pad_start(0.25) == 0.0 and bounds.pad_end(40.0, ceiling=40.4) == pytest.approx(40.4)
    assert bounds.pad_end(20.0, ceiling=60, max_pad=1.0) == 21.0  # a 10 s pause gives at most 1 s
    assert bounds.pad_start(7.0) == 7.0  # inside a cue: nothing to pad into


def test_segments_are_checked_for_length_and_overlap():
    bounds = Boundaries([*CUES, Cue(41.0, 70.0, "e")], tolerance=0.5)
    drafts = [
        SegmentDraft(start_time="00:00.250", end_time="00:40.000", title="ok"),
        SegmentDraft(start_time="00:30.000", end_time="00:40.000", title="short"),
        SegmentDraft(start_time="00:30.000", end_time="01:10.000", title="overlaps"),
        SegmentDraft(start_time="00:00.250", end_time="01:10.000", title="long"),
    ]
    kept, rejected = check_segments(drafts, bounds, 20, 60)
    assert [s.title for s in kept] == ["ok"]
    assert any("'short'" in r and "lasts 10.0 s" in r for r in rejected)
    assert any("'overlaps'" in r and "overlaps" in r for r in rejected)
    assert any("'long'" in r and "lasts 69.8 s" in r for r in rejected)


def test_ordering_options_are_read_back_into_permutations():
    texts = ["Add 0.5 M NaCl to the tube", "Vortex for 10 s", "Spin down at 300 x g"]
    assert split_numbered("1. a2. b3. c", 3) == ["a", "b", "c"]
    assert read_permutation(
        "1. Vortex for 10 s\n2. Add 0.5 M NaCl to the tube\n3. Spin down at 300 x g", texts, "B"
    ) == (1, 0, 2)
    assert read_permutation(
        "1. Spin down at 300 x g.2. vortex  for 10 s3. Add 0.5 M NaCl to the tube", texts, "C"
    ) == (2, 1, 0)
    assert match_step("Spin down at 300 x g", texts) == 2 and match_step("Discard the tube", texts) is None
    with pytest.raises(InvalidReply, match="not in the list"):
        read_permutation("1. Vortex for 10 s\n2. Discard the tube\n3. Spin down at 300 x g", texts, "D")
    with pytest.raises(InvalidReply, match="not a permutation"):
        read_permutation("1. Vortex for 10 s\n2. Vortex for 10 s\n3. Spin down at 300 x g", texts, "D")
    with pytest.raises(InvalidReply, match="numbered list"):
        read_permutation("Vortex, then spin, then add", texts, "D")
