"""The task rules a reviewer's edit must respect (release format, paper's constraints)."""

from __future__ import annotations

from expvid.platform.services.content import Content, content_problems, same_content

MCQ = {"A": "Tweezers", "B": "Spatula", "C": "Pipette", "D": "Scalpel"}


def test_valid_level1_question_has_no_problems() -> None:
    assert content_problems("tools", Content("Which tool?", MCQ, "A")) == []


def test_level1_needs_four_distinct_options_and_a_listed_answer() -> None:
    three = dict(list(MCQ.items())[:3])
    assert any(
        "exactly 4 options" in p for p in content_problems("tools", Content("Which tool?", three, "A"))
    )
    dup = {**MCQ, "D": " tweezers "}
    assert any("same text" in p for p in content_problems("tools", Content("Which tool?", dup, "A")))
    assert any(
        "one of the option letters" in p for p in content_problems("tools", Content("Which tool?", MCQ, "E"))
    )
    gap = {"A": "x", "B": "y", "C": "z", "E": "w"}
    assert any("lettered" in p for p in content_problems("tools", Content("q?", gap, "A")))
    assert any("empty" in p for p in content_problems("tools", Content("  ", MCQ, "A")))


def test_completeness_verification_options_are_step_numbers() -> None:
    ok = {"A": "1", "B": "2", "C": "3"}
    assert content_problems("video_verification", Content("Which step?", ok, "B")) == []
    words = {"A": "one", "B": "two", "C": "three"}
    assert any("step numbers" in p for p in content_problems("video_verification", Content("q", words, "B")))
    assert any(
        "3 to 10" in p
        for p in content_problems("video_verification", Content("q", {"A": "1", "B": "2"}, "A"))
    )


def test_step_answers() -> None:
    assert content_problems("sequence_generation", Content("q", None, ["3", "4"])) == []
    assert content_problems("sequence_generation", Content("q", None, ["3", "3"]))
    assert content_problems("sequence_generation", Content("q", None, ["x"]))
    assert content_problems("step_prediction", Content("q", None, 5)) == []
    assert content_problems("step_prediction", Content("q", None, "5")) == []
    assert content_problems("step_prediction", Content("q", None, 0))
    assert content_problems("step_prediction", Content("q", None, True))


def test_blanks_need_one_answer_each() -> None:
    question = "Colonies on the ____ coating stayed pluripotent for ___ hours."
    assert content_problems("experimental_conclusion", Content(question, None, ["vitronectin", "12"])) == []
    problems = content_problems("experimental_conclusion", Content(question, None, ["vitronectin"]))
    assert any("2 blank(s) but 1 answer(s)" in p for p in problems)
    assert content_problems("scientific_discovery", Content("No blank here.", None, ["x"]))
    assert content_problems("scientific_discovery", Content("A ____ one.", None, [" "]))


def test_same_content_ignores_whitespace_only() -> None:
    a = Content("Which  tool?\r\n", MCQ, "A")
    b = Content("Which tool?", {k: f" {v} " for k, v in MCQ.items()}, "A")
    assert same_content(a, b)
    assert not same_content(a, Content("Which tool?", MCQ, "B"))
    assert not same_content(a, Content("which tool?", MCQ, "A"))
