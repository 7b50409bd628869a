"""Parts of the sample generator: scripts, timelines, quantities, frame rendering."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.media.synth import read_frame_code
from expvid.suites.sample.quantities import parse_quantity, quantity_question
from expvid.suites.sample.quantity_distractors import quantity_distractors
from expvid.suites.sample.render import FrameRenderer
from expvid.suites.sample.scripts import ScriptError, load_scripts, parse_script
from expvid.suites.sample.timeline import plan_timeline

MINIMAL = """
id = "1"
title = "T"
discipline = "Biology"
curation = "keep"
abstract = "a"
introduction = "i"
slide_narration = "s"
[[stages]]
name = "S"
[[stages.steps]]
text = "Add buffer"
tool = "pipette"
material = "buffer"
quantity = "5 mL"
operation = "Adding"
narration = "Add 5 milliliters of buffer."
"""


def test_script_errors_name_the_file_and_field() -> None:
    with pytest.raises(ScriptError, match=r"bad\.toml: not valid TOML"):
        parse_script("bad.toml", "id = ")
    with pytest.raises(ScriptError, match=r"x\.toml: stage 1 has 1 steps \(3 to 10 needed\)"):
        parse_script("x.toml", MINIMAL)
    three_steps = MINIMAL + MINIMAL[MINIMAL.index("[[stages.steps]]") :] * 2
    with pytest.raises(ScriptError, match="needs analysis and discovery questions"):
        parse_script("x.toml", three_steps)
    blanks = three_steps + '[[analysis]]\nquestion = "A {} and {}"\nanswers = ["one"]\n'
    with pytest.raises(ScriptError, match=r"x\.toml\.analysis\[0\]: 2 blank mark\(s\) '\{\}' but 1 answer"):
        parse_script("x.toml", blanks)
    count = three_steps.replace('quantity = "5 mL"', 'quantity = "3 washes"', 1)
    with pytest.raises(ScriptError, match="step 1: no question template for quantity '3 washes'"):
        parse_script("x.toml", count)
    with pytest.raises(ScriptError, match=r"stages\[0\]\.steps\[0\]: 'tool' must be a string"):
        parse_script("x.toml", MINIMAL.replace('tool = "pipette"', "tool = 3"))


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_timelines_respect_the_papers_durations(seed: int) -> None:
    for script in load_scripts():
        timeline = plan_timeline(script, seed)
        assert timeline.steps[0][0] == 0 and timeline.slide[1] == timeline.n_frames
        assert all(a[1] == b[0] for a, b in itertools.pairwise(timeline.steps))
        assert timeline.slide[0] == timeline.steps[-1][1]
        for start, end in timeline.steps:
            assert 6 <= (end - start) / timeline.fps <= 13
        if script.kept:
            for start, end in timeline.stages:
                assert 20 <= (end - start) / timeline.fps <= 60  # ExpVid 3.1: stages of 20-60 s
            assert timeline.procedure_end / timeline.fps >= 120
            assert timeline.duration <= 240
            assert any(len(steps) >= 4 for steps in timeline.stage_steps)  # step prediction possible


@given(
    value=st.one_of(
        st.integers(1, 5000).map(float), st.floats(0.01, 999, allow_nan=False).map(lambda v: round(v, 2))
    ),
    unit=st.sampled_from(
        ["µL", "mL", "mg", "g", "%", "mol%", "x g", "min", "h", "washes", "drops", "nm", "°C"]
    ),
    seed=st.integers(0, 10_000),
)
def test_quantity_distractors_stay_in_unit_and_range(value: float, unit: str, seed: int) -> None:
    if unit in ("%", "mol%"):
        value = min(value, 100.0)
    if unit in ("washes", "drops"):
        value = float(max(1, round(value)))
    text = f"{value:g}{'' if unit in ('%', 'mol%') else ' '}{unit}"
    truth = parse_quantity(text)
    distractors = quantity_distractors(text, random.Random(seed))
    assert len(set(distractors)) == 3
    for distractor in distractors:
        parsed = parse_quantity(distractor)
        assert distractor != text and parsed.value != truth.value
        assert parsed.unit.rstrip("s").removesuffix("e") == truth.unit.rstrip("s").removesuffix("e")
        if unit == "°C":
            assert abs(parsed.value - truth.value) <= 40
        else:
            assert 0 < parsed.value <= truth.value * 4.5 + 3
        if unit in ("%", "mol%"):
            assert parsed.value <= 100


def test_counted_nouns_agree_and_templates_fit_units() -> None:
    distractors = quantity_distractors("1 drop", random.Random(0))
    assert all(d.endswith(" drops") for d in distractors)
    assert "1 wash" in quantity_distractors("2 washes", random.Random(3)) + quantity_distractors(
        "2 washes", random.Random(4)
    ) + quantity_distractors("2 washes", random.Random(5))
    assert quantity_question("500 µL", "PBS", None) == "What volume of PBS is used in this step?"
    assert quantity_question("37 °C", "cells", None) == "At what temperature is this step performed?"
    assert quantity_question("3 washes", "cells", "How often?") == "How often?"
    with pytest.raises(ValueError, match="does not start with a number"):
        parse_quantity("a few drops")


def test_frames_show_their_number_and_their_step() -> None:
    script = load_scripts()[0]
    timeline = plan_timeline(script, 0)
    renderer = FrameRenderer(script, timeline)
    step_a, step_b = timeline.steps[0], timeline.steps[1]
    frames = [
        frame.copy() for frame in renderer.frames([(step_a[0], step_a[0] + 3), (step_b[0], step_b[0] + 1)])
    ]
    assert [read_frame_code(frame) for frame in frames] == [
        step_a[0],
        step_a[0] + 1,
        step_a[0] + 2,
        step_b[0],
    ]
    again = renderer.frame(step_a[0] + 1)  # the same frame rendered alone is identical (cached code rows)
    assert np.array_equal(again, frames[1])
    assert not np.array_equal(frames[0][40:], frames[3][40:])  # different steps look different
    assert not np.array_equal(frames[0][80:], frames[2][80:])  # the tool moves within a step
    slide = renderer.frame(timeline.slide[0])
    assert read_frame_code(slide) == timeline.slide[0]
    assert slide[60:].mean() > frames[0][60:].mean() + 40  # the bright results slide
    with pytest.raises(IndexError):
        renderer.frame(timeline.n_frames)
