"""Level-2 step-list edits and the rebuilding of the four derived questions (pure functions)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from platform_candidates import FULL_STEPS, SEG1

from expvid.platform.services.content import Content, content_problems
from expvid.platform.services.level2 import (
    RebuildError,
    Step,
    StepEditError,
    StepRow,
    apply_step_edit,
    rebuild_content,
    renumber_segment,
    replace_step_list,
    rows_from_steps,
)

SEGMENT = [Step(n, FULL_STEPS[n - 1], s, e) for n, s, e in SEG1]  # steps 3, 4, 5


def numbered(texts: list[str]) -> str:
    return "\n".join(f"{i}. {t}" for i, t in enumerate(texts, start=1))


def rebuild(task: str, content: Content, rows: list[StepRow]) -> Content:
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    return rebuild_content(
        task, content, key=f"{task}/0", old_full=FULL_STEPS, new_full=change.full_steps,
        old_segment=SEGMENT, new_segment=change.segment_steps, renumber=change.renumber,
    )  # fmt: skip


def test_unchanged_rows_change_nothing() -> None:
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows_from_steps(SEGMENT))
    assert change.full_steps == FULL_STEPS
    assert change.segment_steps == SEGMENT
    assert not change.shifts_numbers


def test_refined_wording_updates_the_full_list() -> None:
    rows = rows_from_steps(SEGMENT)
    rows[1] = StepRow(4, "Rinse the well twice with 1 mL PBS", 2.1, 3.0)
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    assert change.full_steps[3] == "Rinse the well twice with 1 mL PBS"
    assert change.segment_steps[1] == Step(4, "Rinse the well twice with 1 mL PBS", 2.1, 3.0)
    assert len(change.full_steps) == len(FULL_STEPS)


def test_removing_an_unobserved_step_keeps_it_in_the_experiment() -> None:
    rows = [r for r in rows_from_steps(SEGMENT) if r.ref != 4]
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    assert [s.number for s in change.segment_steps] == [3, 5]
    assert change.full_steps == FULL_STEPS


def test_adding_a_missing_operation_renumbers_what_follows() -> None:
    rows = rows_from_steps(SEGMENT)
    rows[0] = StepRow(3, rows[0].text, 1.0, 1.5)
    rows.insert(1, StepRow(None, "Tilt the plate to drain", 1.5, 2.0))
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    assert change.full_steps[3] == "Tilt the plate to drain"
    assert len(change.full_steps) == 7
    assert change.renumber == {1: 1, 2: 2, 3: 3, 4: 5, 5: 6, 6: 7}
    assert [s.number for s in change.segment_steps] == [3, 4, 5, 6]
    other = renumber_segment([Step(5, FULL_STEPS[4]), Step(6, FULL_STEPS[5])], change)
    assert [(s.number, s.text) for s in other] == [(6, FULL_STEPS[4]), (7, FULL_STEPS[5])]


def test_new_first_row_goes_before_the_first_step() -> None:
    rows = [StepRow(None, "Label the wells"), *rows_from_steps(SEGMENT)]
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    assert change.full_steps[2] == "Label the wells"
    assert [s.number for s in change.segment_steps] == [3, 4, 5, 6]


def test_an_existing_step_can_join_the_segment() -> None:
    rows = [*rows_from_steps(SEGMENT), StepRow(6, FULL_STEPS[5], 4.0, 5.0)]
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    assert [s.number for s in change.segment_steps] == [3, 4, 5, 6]
    assert change.full_steps == FULL_STEPS


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [
        ([StepRow(4, "x"), StepRow(3, "y")], "keep the experiment's step order"),
        ([StepRow(3, "  ")], "text is empty"),
        ([StepRow(3, "a"), StepRow(3, "b")], "appear twice"),
        ([StepRow(3, "a", 5.0, 4.0)], "must be after start"),
        ([StepRow(99, "a")], "not in the experiment's step list"),
        ([], "at least one step"),
        ([StepRow(3, "a", 3.0, 4.0), StepRow(4, "b", 1.0, 2.0)], "rows 1 and 2 overlap"),
        ([StepRow(3, "a", 1.0, 2.5), StepRow(4, "b", 2.0, 3.0)], "row 1 ends at 2.5 s, row 2 starts at 2 s"),
        ([StepRow(3, "a", float("nan"), 2.0)], "start time is not a number"),
    ],
)
def test_bad_edits_are_explained(rows: list[StepRow], fragment: str) -> None:
    with pytest.raises(StepEditError) as caught:
        apply_step_edit(FULL_STEPS, SEGMENT, rows)
    assert any(fragment in p for p in caught.value.problems), caught.value.problems


def test_step_times_must_lie_inside_the_segment_one_after_the_other() -> None:
    rows = rows_from_steps(SEGMENT)  # 1.0-2.0, 2.0-3.0, 3.0-4.0: touching steps are fine
    assert apply_step_edit(FULL_STEPS, SEGMENT, rows, window=(1.0, 4.0)).segment_steps == SEGMENT
    rows[2] = StepRow(5, rows[2].text, 3.0, 4.5)
    rows[0] = StepRow(3, rows[0].text, 0.5, 2.0)
    with pytest.raises(StepEditError) as caught:
        apply_step_edit(FULL_STEPS, SEGMENT, rows, window=(1.0, 4.0))
    assert caught.value.problems == [
        "row 1: the start time (0.5 s) lies outside the segment (1-4 s)",
        "row 3: the end time (4.5 s) lies outside the segment (1-4 s)",
    ]
    # A step whose end is missing still may not start before the previous one ends.
    rows = [StepRow(3, "a", 1.0, None), StepRow(4, "b", 0.9, 2.0)]
    with pytest.raises(StepEditError, match="rows 1 and 2 overlap"):
        apply_step_edit(FULL_STEPS, SEGMENT, rows, window=(0.0, 4.0))


def test_sequence_generation_rebuilt_keeps_stem_and_answer_type() -> None:
    stem = "Based on the full step list, determine the step numbers shown in the video.\nFull Step List:\n"
    content = Content(stem + numbered(FULL_STEPS), None, ["3", "4", "5"])
    rows = rows_from_steps(SEGMENT)
    rows.insert(1, StepRow(None, "Tilt the plate to drain"))
    rebuilt = rebuild("sequence_generation", content, rows)
    assert rebuilt.answer == ["3", "4", "5", "6"]
    assert rebuilt.question.startswith(stem + "1. " + FULL_STEPS[0])
    assert "4. Tilt the plate to drain\n5. Rinse the well twice with PBS" in rebuilt.question
    assert rebuilt.question.endswith("7. " + FULL_STEPS[5])
    assert content_problems("sequence_generation", rebuilt) == []


@pytest.mark.parametrize("answer", [5, "5"])
def test_step_prediction_answer_follows_the_same_step(answer: int | str) -> None:
    stem = "Given all steps of the experiment, please predict the next operation.\nFull Step List:\n"
    question = stem + numbered(FULL_STEPS).removeprefix("1. ")  # the release's quirk: no "1." first
    rows = rows_from_steps(SEGMENT)
    rows.insert(0, StepRow(None, "Label the wells"))
    rebuilt = rebuild("step_prediction", Content(question, None, answer), rows)
    assert rebuilt.answer == (6 if isinstance(answer, int) else "6")
    assert rebuilt.question.startswith(stem + "1. " + FULL_STEPS[0] + "\n2. ")
    with pytest.raises(RebuildError, match="predicted step"):
        rebuild(
            "step_prediction",
            Content(question, None, answer),
            [r for r in rows_from_steps(SEGMENT) if r.ref != 5],
        )


def test_completeness_verification_tracks_the_removed_step() -> None:
    texts = [s.text for s in SEGMENT]
    content = Content(
        "Which step was *not* performed in the video?\nStep List:\n" + numbered(texts),
        {"A": "1", "B": "2", "C": "3"},
        "B",  # local step 2 = global step 4 was cut from the clip
    )
    rows = [StepRow(None, "Label the wells"), *rows_from_steps(SEGMENT)]
    rebuilt = rebuild("video_verification", content, rows)
    assert rebuilt.options == {"A": "1", "B": "2", "C": "3", "D": "4"}
    assert rebuilt.answer == "C"
    assert "1. Label the wells\n2. Aspirate" in rebuilt.question
    with pytest.raises(RebuildError, match="removed from the segment"):
        rebuild("video_verification", content, [r for r in rows_from_steps(SEGMENT) if r.ref != 4])
    with pytest.raises(RebuildError, match="last step"):
        rebuild("video_verification", content, [r for r in rows_from_steps(SEGMENT) if r.ref != 5])


def test_step_ordering_keeps_orderings_when_only_wording_changes() -> None:
    texts = [s.text for s in SEGMENT]
    options = {
        "A": numbered([texts[1], texts[0], texts[2]]),
        "B": numbered(texts),
        "C": numbered([texts[0], texts[2], texts[1]]),
        "D": numbered([texts[2], texts[1], texts[0]]),
    }
    content = Content("What is the correct sequence?", options, "B")
    rows = rows_from_steps(SEGMENT)
    rows[0] = StepRow(3, "Aspirate all medium", 1.0, 2.0)
    rebuilt = rebuild("sequence_ordering", content, rows)
    new = ["Aspirate all medium", texts[1], texts[2]]
    assert rebuilt.options == {
        "A": numbered([new[1], new[0], new[2]]),
        "B": numbered(new),
        "C": numbered([new[0], new[2], new[1]]),
        "D": numbered([new[2], new[1], new[0]]),
    }
    assert rebuilt.answer == "B"


def test_step_ordering_regenerates_distinct_distractors_when_steps_change() -> None:
    texts = [s.text for s in SEGMENT]
    options = {"A": numbered(texts), "B": numbered(texts[::-1]), "C": numbered([texts[1], texts[0], texts[2]]),
               "D": numbered([texts[0], texts[2], texts[1]])}  # fmt: skip
    rows = [*rows_from_steps(SEGMENT), StepRow(6, FULL_STEPS[5])]
    rebuilt = rebuild("sequence_ordering", Content("Order?", options, "A"), rows)
    assert rebuilt.answer == "A"
    assert rebuilt.options is not None
    assert rebuilt.options["A"] == numbered([*texts, FULL_STEPS[5]])
    assert len(set(rebuilt.options.values())) == 4
    assert content_problems("sequence_ordering", rebuilt) == []
    again = rebuild("sequence_ordering", Content("Order?", options, "A"), rows)
    assert again == rebuilt  # deterministic


def test_replace_step_list_falls_back_to_the_paper_stem() -> None:
    rebuilt = replace_step_list("Free text with no list", ["a", "b"], ["c"], "sequence_generation")
    assert rebuilt.startswith("Based on the full step list")
    assert rebuilt.endswith("1. c")


@st.composite
def edits(draw: st.DrawFn) -> list[StepRow]:
    rows: list[StepRow] = []
    for step in SEGMENT:
        if draw(st.booleans()):
            rows.append(
                StepRow(None, draw(st.sampled_from(["Tilt plate", "Wait 5 min", "Check under scope"])))
            )
        if draw(st.integers(0, 3)) > 0:  # mostly kept
            text = step.text if draw(st.booleans()) else step.text + " carefully"
            rows.append(StepRow(step.number, text))
    if not rows or draw(st.booleans()):
        rows.append(StepRow(None, "Record the result"))
    return rows


@settings(max_examples=60, deadline=None)
@given(edits())
def test_any_edit_keeps_the_lists_consistent(rows: list[StepRow]) -> None:
    change = apply_step_edit(FULL_STEPS, SEGMENT, rows)
    inserted = sum(1 for r in rows if r.ref is None)
    assert len(change.full_steps) == len(FULL_STEPS) + inserted
    olds = sorted(change.renumber)
    assert all(change.renumber[a] < change.renumber[b] for a, b in itertools.pairwise(olds))
    numbers = [s.number for s in change.segment_steps]
    assert numbers == sorted(set(numbers))
    for row, step in zip(rows, change.segment_steps, strict=True):
        assert change.full_steps[step.number - 1] == row.text.strip()
        if row.ref is not None:
            assert step.number == change.renumber[row.ref]
    untouched = [n for n in range(1, 7) if n not in {r.ref for r in rows}]
    for old in untouched:
        assert change.full_steps[change.renumber[old] - 1] == FULL_STEPS[old - 1]
