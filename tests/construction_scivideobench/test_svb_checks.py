"""The rules replies are held to: time ranges forwards and inside the video, text options without
twins (one check, at generation and after the refiner), decimals that show the value."""

from __future__ import annotations

import pytest

from expvid.construction.llm import InvalidReply
from expvid.construction.recipes.scivideobench import option_checks
from expvid.construction.recipes.scivideobench.checks import check_comparison, check_generated, check_refined
from expvid.construction.recipes.scivideobench.schemas import Comparison, Generated, Refined
from expvid.construction.recipes.scivideobench.times import question_time_problems, span_problem

ANSWER = "It keeps the pH stable"
NINE = [f"It raises the temperature by {n} degrees" for n in range(2, 11)]


@pytest.mark.parametrize(
    ("question", "problem"),
    [
        (
            "At 02:05-00:03, why is the buffer added?",
            "the question's range: 02:05-00:03 does not run forwards",
        ),
        ("Between 01:10 and 00:40, what changes?", "does not run forwards"),
        ("From 01:00 to 01:00, what is added?", "does not run forwards"),
        (
            "At 00:10–00:20 and at 05:01, what is read?",
            "refers to 05:01, after the end of the video (05:00, 300.0 s)",
        ),
        ("At 04:58-05:30, what is seen?", "ends at 05:30, after the end of the video"),
    ],
)
def test_backward_ranges_and_times_after_the_end_are_refused(question: str, problem: str) -> None:
    problems = question_time_problems(question, 300.0)
    assert any(problem in p for p in problems), problems


def test_forward_ranges_inside_the_video_pass() -> None:
    assert question_time_problems("At 00:10-00:20 and 04:59 - 05:00, a 1:50 dilution is made", 299.6) == []
    assert span_problem("04:59", "05:00", 299.6, "cue") is None  # the end rounded up to the whole second
    assert "starts at 05:00, at or after the end" in str(span_problem("05:00", None, 299.6, "cue"))
    assert "expected a time as mm:ss" in str(span_problem("1 min", None, 299.6, "cue"))


def test_a_backward_cue_is_refused() -> None:
    reply = Comparison.model_validate(
        {
            "cues": [{"cue": "the balance reading", "visible": True, "start": "02:05", "end": "00:03"}],
            "grounded": True,
        }
    )
    with pytest.raises(InvalidReply, match=r"cue 'the balance reading': 02:05-00:03 does not run forwards"):
        check_comparison(reply, 300.0)


@pytest.mark.parametrize(
    ("distractors", "problem"),
    [
        (NINE[:8], "give exactly 9 distractors, got 8"),
        (
            [*NINE[:8], "  it keeps the PH   stable."],
            "distractor 9 ('  it keeps the PH   stable.') is the correct answer itself (normal form)",
        ),
        ([*NINE[:8], "It keeps pH stable"], "is the correct answer itself (normal form)"),  # article dropped
        ([*NINE[:8], f"“{NINE[0]}”"], "distractors 1 and 9 are the same option"),
        ([*NINE[:8], " "], "distractor 9 is empty"),
    ],
)
def test_text_option_twins_are_refused(distractors: list[str], problem: str) -> None:
    assert any(problem in p for p in option_checks.option_problems(ANSWER, distractors))


def test_twins_are_the_audits_near_duplicates_numbers_by_value() -> None:
    nine = [f"{n}%" for n in range(10, 19)]
    problems = option_checks.option_problems("98%", ["98 %", *nine[1:]])
    assert problems == ["distractor 1 ('98 %') is the correct answer itself (equal value)"]
    assert option_checks.option_problems("0.5 mL", ["500 µL", *[f"{n} mL" for n in range(2, 10)]]) != []
    assert option_checks.option_problems("-3.86%", ["3.86%", *nine[1:]]) == []  # a sign is a different answer


def _generated(distractors: list[str]) -> Generated:
    return Generated.model_validate(
        {
            "questions": [
                {"type": "conceptual", "question": "Why?", "answer": ANSWER, "distractors": distractors}
            ]
        }
    )


def test_one_twin_check_holds_at_generation_and_after_the_refiner() -> None:
    """The build's check (the audit's near-duplicate test with its MiniLM embeddings) refuses a
    paraphrase with the same words at both places; without the model it is not seen."""
    paraphrase = [*NINE[:8], "It just keeps the pH stable"]
    per_type = {"conceptual": 1, "hypothetical": 0, "quantitative": 0}
    refined = Refined(question="At 00:10-00:20, why?", distractors=paraphrase)
    check_generated(_generated(paraphrase), per_type, 300.0)  # normal forms and values alone let it through
    check_refined(refined, ANSWER, False, 300.0)

    twins = option_checks.TwinCheck.with_model()
    with pytest.raises(InvalidReply, match=r"is the correct answer itself \(embedding 0\.9\d\)"):
        check_generated(_generated(paraphrase), per_type, 300.0, twins)
    with pytest.raises(InvalidReply, match=r"is the correct answer itself \(embedding 0\.9\d\)"):
        check_refined(refined, ANSWER, False, 300.0, twins)
    # distinct answers in one form are not twins, however alike they embed
    distinct = [f"It keeps the pH {word}" for word in ("lower", "higher", "acidic", "basic", "neutral",
                                                       "rising", "falling", "varying", "alkaline")]  # fmt: skip
    check_generated(_generated(distinct), per_type, 300.0, twins)
    assert twins.embeddings is not None and len(twins.embeddings.vectors) >= 2  # embedded once, kept


def test_a_quantitative_value_must_be_shown_by_its_decimals() -> None:
    per_type = {"conceptual": 0, "hypothetical": 0, "quantitative": 1}
    wrong = Generated.model_validate(
        {
            "questions": [
                {"type": "quantitative", "question": "How much?", "value": 2.5, "unit": "g", "decimals": 0}
            ]
        }
    )
    with pytest.raises(InvalidReply, match=r"the value 2\.5 has more decimals than 'decimals' \(0\) shows"):
        check_generated(wrong, per_type, 300.0)
    right = wrong.model_copy(deep=True)
    right.questions[0].decimals = 1
    assert check_generated(right, per_type, 300.0).questions[0].value == 2.5
