"""The recipe against model behaviour seen at real contact: replies with backward times, wrong
decimals and twin options; an evaluator call that fails; the refiner sneaking in a paraphrase of the
answer. One experiment of the narrated sample per build, the roles served by variants of the lab.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from svb_helpers import SvbBuild, build_args
from svb_lab import SvbLab
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.suites.scivideobench.timestamps import times_to_frames

runner = CliRunner()
RETRY = "Your previous reply could not be used"


def _one_experiment(svb_build: SvbBuild, tmp_path: Path) -> Path:
    sources = tmp_path / "sources"
    sources.mkdir()
    first = sorted(svb_build.sources.iterdir())[0]
    (sources / first.name).symlink_to(first, target_is_directory=True)
    return sources


def _jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class MessyLab(SvbLab):
    """First replies as careless models write them; re-asked, it fixes what the message names, except
    that its fixed distractors for the conceptual question include a paraphrase of the answer."""

    def _reply(self, text: str) -> str:
        reply = super()._reply(text)
        if RETRY in text:
            if "Rewrite the question" in text and "(conceptual 1)" in text:
                data = json.loads(reply)
                answer = re.search(r"^Correct answer: (.+)$", text, re.MULTILINE)
                assert answer is not None
                data["distractors"][0] = f"{answer.group(1)}, as the protocol requires"
                return json.dumps(data)
            return reply
        if "Write questions about the experiment below" in text:
            data = json.loads(reply)
            for question in data["questions"]:
                if question["type"] == "quantitative":
                    question["decimals"] = 0  # 2.47 shown with no decimals
            data["questions"][0]["evidence"] = [{"start": "59:00", "end": "59:30", "what": "after the end"}]
            return json.dumps(data)
        if "List every visual cue the rationale needs" in text:
            data = json.loads(reply)
            cue = data["cues"][0]
            cue["start"], cue["end"] = cue["end"], cue["start"]  # "02:05-00:03"
            return json.dumps(data)
        if "Rewrite the question" in text:
            data = json.loads(reply)
            data["question"] = re.sub(r"At (\d\d:\d\d)-(\d\d:\d\d)", r"At \2-\1", data["question"])
            if "(conceptual 1)" in text:
                answer = re.search(r"^Correct answer: (.+)$", text, re.MULTILINE)
                assert answer is not None
                data["distractors"][0] = f" {answer.group(1).upper()}."  # the answer, shouted
            return json.dumps(data)
        return reply

    def _evaluate(self, text: str) -> dict:  # type: ignore[type-arg]
        """Two options that both say the answer: no single right one."""
        question = re.search(r"^Question: (.+)$", text, re.MULTILINE)
        answer = self._find(question.group(1)) if question else None
        options = dict(re.findall(r"^([A-J])\. (.+)$", text.split("Options:")[1], re.MULTILINE))
        if answer and sum(answer.casefold() in option.casefold() for option in options.values()) > 1:
            return {"answerable": False, "answer": None, "rationale": "Two options state the correct answer."}
        return super()._evaluate(text)


def test_backward_times_wrong_decimals_and_twins_are_refused_or_dropped(
    svb_build: SvbBuild, tmp_path: Path
) -> None:
    sources = _one_experiment(svb_build, tmp_path)
    out = tmp_path / "out"
    with LoopbackServer(MessyLab()) as llm:
        result = runner.invoke(app, build_args(sources, out, llm, svb_build.stt))
        requests = list(llm.requests)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    stages = report["calls"]["by_stage"]
    # each careless first reply re-asked once with what was wrong, then accepted
    assert stages["llm:svb_generate"]["invalid_replies"] == 1
    assert (
        stages["llm:svb_compare"]["invalid_replies"] == 3 and stages["llm:svb_refine"]["invalid_replies"] == 3
    )
    feedback = "\n".join(t for r in requests for t in r.texts if RETRY in t)
    assert "evidence: starts at 59:00, at or after the end of the video (02:" in feedback
    assert "the value 2.47 has more decimals than 'decimals' (0) shows" in feedback
    assert "does not run forwards (the start must be before the end)" in feedback
    assert "is the correct answer itself" in feedback  # the shouted twin, caught by the option check
    # the paraphrase the refiner slipped in is caught by asking the evaluator again: dropped, counted
    assert report["items"]["conceptual"] == {
        "kept": 0,
        "dropped": {"evaluator after the refiner: unanswerable": 1},
    }
    assert stages["llm:svb_recheck"]["requests"] == 2  # the conceptual and the hypothetical question
    rows = _jsonl(out / "scivideobench_1k.jsonl")
    assert len(rows) == 2
    for row in rows:
        ranges = re.findall(r"(\d\d):(\d\d)-(\d\d):(\d\d)", row["question"])
        assert ranges and all(int(a) * 60 + int(b) < int(c) * 60 + int(d) for a, b, c, d in ranges)
        frames = re.findall(
            r"frame (\d+) to frame (\d+)", times_to_frames(row["question"], row["video_duration"])
        )
        assert frames and all(int(a) < int(b) for a, b in frames)  # what the official prompt shows
    quantitative = next(r for r in rows if r["question_type"] == "Quantitative Reasoning")
    assert quantitative["options"][quantitative["answer"]] == "2.47 g"
    provenance = {line["uid"]: line for line in _jsonl(out / "provenance.jsonl")}
    for line in provenance.values():
        assert all(cue["start"] < cue["end"] for cue in line["visual_cues"] if cue.get("end"))
        refiner = next(d for d in line["drafts"] if d["role"] == "refiner")
        assert refiner["attempts"] == 2


class FlakyLab(SvbLab):
    """The evaluator's call for the conceptual question fails (HTTP 500) while `failures` last."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def __call__(self, request: RecordedRequest) -> Reply:
        text = "\n".join(request.texts)
        if "Answer the question about the experiment" in text and "(conceptual 1)" in text and self.failures:
            self.failures -= 1
            return Reply.error(500, "The server had an error while processing your request.")
        return super().__call__(request)


def test_a_failed_evaluator_unit_is_listed_fails_the_build_and_is_retried_alone(
    svb_build: SvbBuild, tmp_path: Path
) -> None:
    sources = _one_experiment(svb_build, tmp_path)
    out = tmp_path / "out"
    lab = FlakyLab(failures=1)
    with LoopbackServer(lab) as llm:
        args = build_args(sources, out, llm, svb_build.stt)
        first = runner.invoke(app, args)
        report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
        assert first.exit_code == 1, first.output
        [failed] = report["failed_units"]
        assert failed["stage"] == "evaluate" and "/conceptual: " in failed["message"] and failed["transient"]
        assert "failed: " in first.output and "retry exactly those" in first.output
        assert "## Failed units" in (out / "build_report.md").read_text(encoding="utf-8")
        assert report["total_items"] == 2  # the others are written
        sent = len(llm.requests)
        second = runner.invoke(app, args)
        retried = llm.requests[sent:]
    assert second.exit_code == 0, second.output
    report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    assert not report["failed_units"] and report["total_items"] == 3
    # exactly the failed unit, then what follows it for that question; nothing else is asked again
    assert {s: c["requests"] for s, c in report["calls"]["by_stage"].items() if c["requests"]} == {
        "llm:svb_evaluate": 1,
        "llm:svb_compare": 1,
        "llm:svb_refine": 1,
        "llm:svb_recheck": 1,
        "blind:scivideobench_official_prompt": 1,
    }
    assert all("(conceptual 1)" in "\n".join(r.texts) for r in retried)
    assert runner.invoke(app, args).exit_code == 0  # and a third run has nothing to do
    report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    assert report["calls"]["sent"] == 0 and report["total_items"] == 3
