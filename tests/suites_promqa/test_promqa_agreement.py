"""The judge-agreement check of ProMQA §4.2: Pearson correlation and accuracy against human judgements."""

from __future__ import annotations

import json

import pytest

from expvid.schema import DataError
from expvid.scoring.agreement import judge_agreement, pearson, read_human_judgments


def test_pearson_and_accuracy() -> None:
    judge = {"a": 2.0, "b": 1.0, "c": 0.0, "d": 2.0, "e": None}
    human = {"a": 2.0, "b": 2.0, "c": 0.0, "d": 2.0, "e": 1.0}
    result = judge_agreement(judge, human)
    assert result.n == 4 and result.n_without_judge == 1
    assert result.accuracy == pytest.approx(0.75)
    # x = [2, 1, 0, 2], y = [2, 2, 0, 2]: r = 2.5 / sqrt(2.75 * 3) ~ 0.8704
    assert result.pearson == pytest.approx(2.5 / (2.75 * 3) ** 0.5)
    assert result.confusion == {"2": {"2": 2, "1": 1}, "0": {"0": 1}}


def test_constant_judgements_have_no_correlation() -> None:
    assert pearson([1, 1, 1], [0, 1, 2]) is None
    assert judge_agreement({"a": 1.0, "b": 1.0}, {"a": 1.0, "b": 1.0}).accuracy == 1.0


def test_reading_the_file(tmp_path) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text('{"id": "q1", "score": 2}\n{"question_id": "q2", "human": "1"}\n')
    assert read_human_judgments(path) == {"q1": 2.0, "q2": 1.0}
    mapping = tmp_path / "human.json"
    mapping.write_text(json.dumps({"q1": 0, "q2": 2}))
    assert read_human_judgments(mapping) == {"q1": 0.0, "q2": 2.0}


def test_bad_lines_are_named(tmp_path) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text(
        '{"id": "q1", "score": 2}\n{"id": "q2", "score": 5}\n{"id": "q3"}\n{"id": "q1", "score": 0}\n'
    )
    with pytest.raises(DataError) as raised:
        read_human_judgments(path)
    text = str(raised.value)
    assert "human.jsonl:2" in text and "not one of [0, 1, 2]" in text
    assert "human.jsonl:3" in text and "human.jsonl:4" in text and "second judgement" in text
