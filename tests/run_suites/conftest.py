"""Fixtures for running the SciVideoBench, ProMQA and SFE suites end to end.

The samples are generated once per session (read-only). `model_reply` and `judge_reply` are
stand-ins served by real loopback OpenAI-compatible servers: they answer in the shape each
suite's prompt asks for, so what is scored is exactly what a real model's reply would go through.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.suites.promqa import make_promqa_sample
from expvid.suites.scivideobench import make_scivideobench_sample
from expvid.suites.sfe import make_sfe_sample
from expvid.suites.sfe.sample import BOXES_E011

E011_REPLY = "[" + ";".join(",".join(f"{v:.2f}" for v in box) for box in BOXES_E011) + "]"


@pytest.fixture(scope="session")
def svb_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run_svb") / "sample"
    make_scivideobench_sample(root)
    return root


@pytest.fixture(scope="session")
def promqa_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run_promqa") / "sample"
    make_promqa_sample(root)
    return root


@pytest.fixture(scope="session")
def sfe_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run_sfe") / "sample"
    make_sfe_sample(root)
    return root


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("suite_cache")


def model_reply(request: RecordedRequest) -> Reply:
    text = "\n".join(request.texts)
    if "Answer with the option's letter" in text:  # SciVideoBench, direct
        return Reply.ok("I think the answer is B")
    if "Therefore, the final answer is" in text:  # SciVideoBench, CoT
        return Reply.ok(
            "The buffer is cold, so the enzyme stays inactive.\nTherefore, the final answer is: A"
        )
    if text.startswith("[Instruction]\nThis is a multimodal question answering task."):  # ProMQA
        return Reply.ok("You should microwave the mug of milk for 30 seconds.")
    if "bounding box" in text:  # SFE grounding
        return Reply.ok(E011_REPLY)
    if "multiple-choice question" in text:
        return Reply.ok("A")
    if "exact match question" in text:
        return Reply.ok("6")
    if "open-ended question" in text:
        return Reply.ok("Benzene: a planar ring of six carbon atoms.")
    return Reply.error(400, "the stand-in model does not know this prompt")


def judge_reply(request: RecordedRequest) -> Reply:
    text = request.texts[-1]
    if "This is an evaluation task." in text:  # ProMQA ternary judge
        question = re.search(r"\[Question\]\n- (.*)\n", text)
        asked = question.group(1) if question else ""
        if asked == "What should I do next?":
            return Reply.ok("[Rationale] It names the next step.\n[Judge] 2")
        if asked == "Did I skip any step so far?":
            return Reply.ok("[Rationale] Half right.\n[Judge] 1")
        if asked == "Was the microwave power right?":
            return Reply.ok("The prediction is close enough, I think.")  # no [Judge]: a judge failure
        return Reply.ok("[Rationale] Different step.\n[Judge] 0")
    if text.startswith("You are a strict evaluator"):  # SFE 0-10 judge
        gold = re.search(r"Ground Truth Answer:\n```\n(.*?)\n```", text, re.DOTALL)
        answer = gold.group(1) if gold else ""
        return Reply.ok({"A": "10", "6": "9", "C": "0"}.get(answer, "5"))
    return Reply.error(400, "the stand-in judge does not know this prompt")


@pytest.fixture
def model_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(model_reply) as server:
        yield server


@pytest.fixture
def judge_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(judge_reply) as server:
        yield server


def plain_text(output: str) -> str:
    """CLI output with rich's panel borders removed and every run of whitespace made one space, so
    a message can be matched however narrow the terminal wrapped it (tests run at COLUMNS=40)."""
    return " ".join(output.translate({ord(c): " " for c in "│╭╮╰╯─┃━"}).split())


@pytest.fixture
def plain():
    return plain_text
