"""MMVU's judge as the official code calls it: structured output sent (and dropped by a server that
refuses it), replies read as the official `beta.chat.completions.parse` reads them, the judge's
settings checked, and a run of one question type with or without a judge."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openai.lib._parsing._completions import type_to_response_format_param
from pydantic import BaseModel
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.rules import Rejection, openai_error
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.suites.api import JudgeReplyError
from expvid.suites.mmvu import MMVUSuite

runner = CliRunner()


class EvaluationOutput(BaseModel):  # `utils/eval_utils.py` of yale-nlp/MMVU, as published (no docstring)
    extracted_answer: str
    correct: bool


def _verdict(request: RecordedRequest) -> Reply:
    """A GPT-4o-like judge: JSON when asked for structured output, Python's True otherwise (the
    prompt's own wording), as unconstrained judges write it."""
    user = request.texts[-1]
    gold = re.search(r"Ground Truth Answer: (.*)\n", user)
    right = bool(gold) and f"final answer is: {gold.group(1)}" in user  # type: ignore[union-attr]
    if "response_format" in request.body:
        return Reply.ok(json.dumps({"extracted_answer": "A", "correct": right}))
    return Reply.ok('{\n    "extracted_answer": "A",\n    "correct": ' + str(right) + "\n}")


def _answer(request: RecordedRequest) -> Reply:
    return Reply.ok("Step 1 ... Therefore, the final answer is: A")


def _eval(mmvu_dir: Path, out: Path, *args: str) -> object:
    return runner.invoke(
        app,
        ["eval", "--suite", "mmvu", "--data", str(mmvu_dir), "--out", str(out), "--no-cache", "--quiet",
         "--frames", "all=2", *args],
    )  # fmt: skip


def test_one_question_type_runs_with_and_without_a_judge(mmvu_dir, tmp_path) -> None:
    """`--tasks multiple_choice` holds no free-text item, yet MMVU's judge decides every answer."""
    offline = _eval(mmvu_dir, tmp_path / "offline", "--model", "random", "--tasks", "multiple_choice")
    assert offline.exit_code == 0, offline.output  # type: ignore[attr-defined]
    scores = json.loads((tmp_path / "offline" / "scores.json").read_text())
    assert scores["tasks"]["multiple_choice"]["n"] == 4
    with LoopbackServer(_answer) as model, LoopbackServer(_verdict) as judge:
        judged = _eval(
            mmvu_dir, tmp_path / "judged", "--tasks", "multiple_choice",
            "--model", f"openai:loopback@{model.openai_base_url}", "--judge", f"openai:gpt-4o@{judge.openai_base_url}",
        )  # fmt: skip
        assert judged.exit_code == 0, judged.output  # type: ignore[attr-defined]
        assert len(judge.requests) == 4  # every multiple-choice answer went to the judge
    scores = json.loads((tmp_path / "judged" / "scores.json").read_text())
    assert scores["tasks"]["multiple_choice"]["score"] == 25.0  # gold A once in four


def test_the_judge_asks_for_the_official_structured_output(mmvu_dir, tmp_path) -> None:
    with LoopbackServer(_answer) as model, LoopbackServer(_verdict) as judge:
        result = _eval(
            mmvu_dir, tmp_path / "run", "--model", f"openai:loopback@{model.openai_base_url}",
            "--judge", f"openai:gpt-4o@{judge.openai_base_url}",
        )  # fmt: skip
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        official = type_to_response_format_param(EvaluationOutput)  # what the official call sends
        assert [r.body["response_format"] for r in judge.requests] == [official] * 8
    judgments = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert all(j["error"] is None for j in judgments) and sum(j["score"] for j in judgments) == 1


def test_a_server_without_structured_output_is_asked_again_without_it(mmvu_dir, tmp_path) -> None:
    def no_response_format(record: RecordedRequest) -> Rejection | None:
        if "response_format" in record.body:  # what OpenAI-compatible servers without it answer
            return openai_error(
                "Unrecognized request argument supplied: response_format", param=None, code=None
            )
        return None

    with LoopbackServer(_answer) as model, LoopbackServer(_verdict, rules=[no_response_format]) as judge:
        spec = f"openai:gpt-4o@{judge.openai_base_url}"
        result = _eval(
            mmvu_dir, tmp_path / "run", "--model", f"openai:loopback@{model.openai_base_url}",
            "--judge", spec, "--tasks", "open_ended",
        )  # fmt: skip
        assert result.exit_code == 3, result.output  # type: ignore[attr-defined]
        assert all("response_format" not in r.body for r in judge.requests)
        judgments = [
            json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()
        ]
        assert all("response_format" in j["sent"]["not_sent"] for j in judgments)
        # Unconstrained, the judge wrote Python's True/False: the official reading has no verdict there.
        assert all(
            j["error"].startswith("unparseable judge: not the EvaluationOutput JSON") for j in judgments
        )
        lenient = runner.invoke(app, ["score", str(tmp_path / "run"), "-S", "judge_reply=lenient", "--quiet",
                                      "--judge", spec, "--no-cache"])  # fmt: skip
        assert lenient.exit_code == 0, lenient.output  # another reading: judged again, every reply read
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["tasks"]["open_ended"]["n_judge_failed"] == 0


@pytest.mark.parametrize(
    ("reply", "official", "lenient"),
    [
        ('{"extracted_answer": "A", "correct": true}', 1.0, 1.0),
        ('{"extracted_answer": "B", "correct": false}', 0.0, 0.0),
        ('  {"correct": false, "extracted_answer": "B", "note": "x"}\n', 0.0, 0.0),  # pydantic ignores extras
        ('{"extracted_answer": "A", "correct": True}', None, 1.0),  # not JSON: the call never returns it
        ('```json\n{"extracted_answer": "A", "correct": true}\n```', None, 1.0),
        ('{"extracted_answer": "A"}', None, None),
        ("Correct.", None, None),
        (None, None, None),
    ],
)
def test_replies_are_read_as_the_official_parse_reads_them(reply, official, lenient) -> None:
    def read(mode: str) -> float | None:
        try:
            return MMVUSuite({"judge_reply": mode}).parse_judge_reply(reply)
        except JudgeReplyError:
            return None

    assert read("official") == official and read("lenient") == lenient
    if official is not None:  # the same verdict as the official pydantic model gives
        assert EvaluationOutput.model_validate_json(reply).correct == bool(official)


def test_the_judge_reading_is_part_of_the_judges_identity() -> None:
    official = MMVUSuite().build_judge("openai:gpt-4o@http://127.0.0.1:9/v1", {}).describe()
    lenient = MMVUSuite({"judge_reply": "lenient"}).build_judge("openai:gpt-4o@http://127.0.0.1:9/v1", {})
    assert official["protocol"] != lenient.describe()["protocol"]
    assert official["response_schema"]["name"] == "EvaluationOutput"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-S", "judge_temperature=-3"], "mmvu setting judge_temperature='-3': Input should be greater than or equal to 0"),
        (["-S", "judge_temperature=nan"], "mmvu setting judge_temperature='nan': Input should be a finite number"),
        (["-S", "judge_temperature=inf"], "mmvu setting judge_temperature='inf': Input should be a finite number"),
        (["-S", "judge_temperature=0.5", "-S", "judge_temperature=1"], "-S judge_temperature given twice ('0.5', then '1'); give it once"),
        (["-S", "judge_temperature"], "-S expects KEY=VALUE, got 'judge_temperature'"),
    ],
)  # fmt: skip
def test_bad_judge_settings_are_refused_in_one_line(mmvu_dir, tmp_path, args, message) -> None:
    result = _eval(mmvu_dir, tmp_path / "run", "--model", "random", *args)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    lines = [line for line in result.output.splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert lines == [f"error: {message}"]
    assert not (tmp_path / "run").exists()
