"""The leakage audits on hand-made items: ASR similarity (real MiniLM), text checks, balance statistics."""

from __future__ import annotations

import math

import pytest

from expvid.construction.audits import (
    AuditResult,
    asr_leakage,
    balance_report,
    chance_level,
    chi_square_p,
    text_checks,
)
from expvid.schema import AnswerType, Item


def mcq(item_id: str, question: str, options: dict[str, str], answer: str, narration: str = "") -> Item:
    return Item(
        id=item_id,
        suite="expvid",
        task=item_id.split("/")[0],
        level=1,
        question=question,
        options=options,
        answer=answer,
        answer_type=AnswerType.CHOICE,
        context=narration,
    )


def test_asr_leakage_flags_narration_that_reaches_the_model_not_answers_narrated_by_construction():
    narration = "Add 500 microliters of vitronectin solution into each well containing a coverslip."
    options = {"A": "Matrigel", "B": "vitronectin solution", "C": "trypsin-EDTA", "D": "mTeSR1 medium"}
    # Narrated by construction (the target came from this sentence), asked with the template: clean.
    narrated = mcq("materials/0", "What material appears in this process?", options, "B", narration)
    # The question quotes the narration: the answer can be read without the video.
    quoted = mcq(
        "materials/1", "After the narrator adds 500 microliters of vitronectin to each well, what material appears?",
        options, "B", narration,
    )  # fmt: skip
    # The question repeats narration words, but they point at no option (a quantity question).
    quantity = mcq(
        "quantity/0", "What volume of vitronectin solution is added to each well?",
        {"A": "250 µL", "B": "500 µL", "C": "1 mL", "D": "100 µL"}, "B", narration,
    )  # fmt: skip
    blanks = Item(
        id="experimental_conclusion/0", suite="expvid", task="experimental_conclusion", level=3,
        question="Title: T\nDiscipline: Biology\nQuestion: Colonies attached within ____ on vitronectin.",
        answer=["4 hours"], answer_type=AnswerType.BLANKS,
        context="As shown in Fig. 2, colonies attached within 4 hours on vitronectin.",
    )  # fmt: skip
    unspoken = blanks.model_copy(
        update={"id": "experimental_conclusion/1", "context": "Coat the coverslips."}
    )
    result = AuditResult()
    asr_leakage([narrated, quoted, quantity, blanks, unspoken], result)
    assert sorted(result.flags) == ["experimental_conclusion/0", "materials/1"]
    flag = result.flags["materials/1"][0]
    assert flag["kind"] == "asr_leakage" and flag["score"] == 1.0 and "vitronectin" in flag["detail"]
    assert '"4 hours"' in result.flags["experimental_conclusion/0"][0]["detail"]


def test_level3_answer_in_question_is_checked_on_the_question_as_shown_by_whole_words():
    titled = Item(
        id="scientific_discovery/0", suite="expvid", task="scientific_discovery", level=3,
        question="Title: Vitronectin-Coated Coverslips\nDiscipline: Biology\nQuestion: The ____ coating is xeno-free.",
        answer=["vitronectin"], answer_type=AnswerType.BLANKS,
    )  # fmt: skip
    prefix_only = titled.model_copy(
        update={"id": "scientific_discovery/1", "answer": ["cover"]}  # "cover" only starts "Coverslips"
    )
    result = AuditResult()
    text_checks([titled, prefix_only], result)
    assert list(result.flags) == ["scientific_discovery/0"]
    assert result.flags["scientific_discovery/0"][0]["kind"] == "answer_in_question"


def test_text_checks_catch_answers_in_the_question_and_long_correct_options():
    given_away = mcq("tools/0", "Which tool, the serological pipette, is used?",
                     {"A": "serological pipette", "B": "glass burette", "C": "plastic syringe", "D": "Pasteur glass pipette"}, "A")  # fmt: skip
    long_correct = mcq("operation/0", "What is done?",
                       {"A": "Stir", "B": "Gently aspirate the medium from the corner of the well", "C": "Pour",
                        "D": "Heat"}, "B")  # fmt: skip
    fine = mcq(
        "tools/1", "Which tool?", {"A": "pipette", "B": "burette", "C": "syringe", "D": "dropper"}, "C"
    )
    result = AuditResult()
    text_checks([given_away, long_correct, fine], result)
    assert [f["kind"] for f in result.flags["tools/0"]] == ["answer_in_question"]
    assert [f["kind"] for f in result.flags["operation/0"]] == ["length_bias"]
    assert "tools/1" not in result.flags


def test_chi_square_p_values_match_the_closed_forms():
    assert chi_square_p([10, 10, 10, 10]) == pytest.approx(1.0)
    # 3 degrees of freedom: Q(1.5, x/2) = erfc(sqrt(x/2)) + exp(-x/2) sqrt(x/2) / Gamma(1.5); x = 15 here.
    half = 7.5
    assert chi_square_p([20, 5, 10, 5]) == pytest.approx(
        math.erfc(math.sqrt(half)) + math.exp(-half) * math.sqrt(half) / math.gamma(1.5)
    )
    assert chi_square_p([30, 10]) == pytest.approx(math.erfc(math.sqrt(5.0)))  # 1 dof, x = 10
    assert chi_square_p([5, 5, 20]) == pytest.approx(math.exp(-7.5))  # 2 dof, x = 15
    stats = pytest.importorskip("scipy.stats")
    for counts in ([16, 7, 7, 10], [3, 9], [1, 2, 3, 4, 5, 6], [12, 0, 0, 1, 2]):
        assert chi_square_p(counts) == pytest.approx(stats.chisquare(counts).pvalue, rel=1e-9)


def test_balance_report_and_chance_levels():
    items = [
        mcq(f"tools/{i}", "q", {"A": "aa", "B": "b", "C": "c", "D": "d"}, "A") for i in range(8)
    ]  # always A, and A is always the longest
    report = balance_report(items)["tools"]
    assert report["answer_letters"] == {"A": 8} and report["chi_square_p"] < 0.001
    assert report["correct_is_longest"] == 1.0 and report["chance_longest"] == 0.25
    step = Item(id="step_prediction/0", suite="expvid", task="step_prediction", level=2,
                question="Predict.\nFull Step List:\n1. a\n2. b\n3. c\n4. d", answer=4,
                answer_type=AnswerType.STEP_NUMBER)  # fmt: skip
    sequence = step.model_copy(update={"answer": [2, 3], "answer_type": AnswerType.STEP_SEQUENCE})
    assert chance_level(items[0]) == 0.25 and chance_level(step) == 0.25 and chance_level(sequence) == 0.5
