"""`expvid export inspect` writes a task package that Inspect AI's own CLI runs, and `expvid score --from
inspect` scores Inspect's logs with the paper's metrics.

The same scripted model (a loopback OpenAI-compatible server) answers `expvid eval` and `inspect eval`:
each item's prompt text and frames must reach it byte for byte the same from both, and Inspect's
scorer (the exported one) must give every item the score `expvid eval` gives it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.schema import Item
from expvid.suites.mmvu import make_mmvu_sample
from expvid.suites.registry import get_suite

#: Inspect's CLI and the virtual environment it runs in take a minute or two beside the runs themselves.
pytestmark = pytest.mark.timeout(900)
runner = CliRunner()
EXPVID_TASKS = "tools,step_prediction,sequence_generation"


def _kind(item: Item) -> int:
    return int(hashlib.sha256(item.id.encode()).hexdigest(), 16) % 4


def _digest(request: RecordedRequest) -> int:
    """What the model was asked: the texts and the frames' bytes."""
    content = hashlib.sha256("\0".join(request.texts).encode())
    for image in request.images:
        content.update(hashlib.sha256(image).digest())
    return int(content.hexdigest(), 16)


def expvid_model(request: RecordedRequest) -> Reply:
    """An answer of the shape the prompt asks for that depends on the text AND the frames: the same
    request gets the same answer from both tools, other frames would get another one. Some requests
    are refused (HTTP 400) and some replies say nothing readable."""
    seed, text = _digest(request), request.texts[-1]
    if seed % 9 == 0:
        return Reply.error(400, "this request is refused (loopback)")
    if seed % 5 == 0:
        return Reply.ok("I cannot tell from these frames.")
    if "multiple choice" in text:
        return Reply.ok(f"The answer is \\boxed{{{'ABCDE'[seed % 5]}}}")
    steps = [int(n) for n in re.findall(r"^\s*(\d+)\.", text, re.MULTILINE)] or [1, 2, 3]
    if "order" in text or "sequence" in text:
        return Reply.ok("\\boxed{" + ", ".join(map(str, steps if seed % 2 else steps[::-1])) + "}")
    return Reply.ok(f"\\boxed{{{steps[seed % len(steps)]}}}")


def mmvu_answer(item: Item) -> Reply:
    said = item.answer if isinstance(item.answer, str) else item.answer[0]  # type: ignore[index]
    return Reply.ok(f"Step 1 ... Therefore, the final answer is: {said if _kind(item) < 2 else 'E'}")


def mmvu_judge(request: RecordedRequest) -> Reply:
    user = request.texts[-1]
    gold = re.search(r"Ground Truth Answer: (.*)\n", user)
    said = re.search(r"final answer is: (.*)$", user)
    right = bool(gold and said) and gold.group(1) == said.group(1)  # type: ignore[union-attr]
    return Reply.ok(json.dumps({"extracted_answer": said.group(1) if said else "", "correct": right}))


class Model:
    """Answers each request by the item its prompt text belongs to (MMVU's questions differ)."""

    def __init__(self, items: list[Item], suite: Any, answer: Any) -> None:
        self.items = {suite.prompt_text(item): item for item in items}
        assert len(self.items) == len(items)
        self.answer = answer

    def __call__(self, request: RecordedRequest) -> Reply:
        return self.answer(self.items[request.texts[-1]])  # type: ignore[no-any-return]


def _inspect_eval(python: Path, task: str, base_url: str, logs: Path, cwd: Path, *args: str) -> None:
    env = {**os.environ, "LOOPBACK_BASE_URL": base_url, "LOOPBACK_API_KEY": "sk-loopback"}
    ran = subprocess.run(
        [str(python), "-m", "inspect_ai", "eval", task, "--model", "openai-api/loopback/loopback",
         "--log-dir", str(logs), "--display", "plain", "--max-connections", "4", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]


def _expvid(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "expvid.cli.main", *args],
        capture_output=True, text=True, cwd=cwd, timeout=300, check=False,
    )  # fmt: skip


def _asked(requests: list[RecordedRequest]) -> list[tuple[list[str], list[str]]]:
    """Every request's texts and frames (their sha256), in a stable order."""
    return sorted((r.texts, [hashlib.sha256(image).hexdigest() for image in r.images]) for r in requests)


def _item_scores(path: Path) -> dict[str, dict[str, Any]]:
    return {row["item_id"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_inspect_runs_the_exported_task_and_agrees_with_expvid_item_by_item(
    inspect_python, sample_dir, tmp_path
) -> None:
    items = get_suite("expvid").load(sample_dir, tasks=EXPVID_TASKS.split(",")).items
    frames = ["--frames", "all=2"]
    with LoopbackServer(expvid_model) as model:
        ours = runner.invoke(app, ["eval", "--data", str(sample_dir), "--tasks", EXPVID_TASKS, *frames,
                                   "--model", f"openai:loopback@{model.openai_base_url}", "--out", str(tmp_path / "run"),
                                   "--no-cache", "--quiet"])  # fmt: skip
        assert ours.exit_code == 3, ours.output  # the refused requests failed
        sent_by_expvid = _asked(model.requests)
        asked_before = len(model.requests)

        exported = runner.invoke(app, ["export", "inspect", str(sample_dir), "--out", str(tmp_path / "pkg"),
                                       "--tasks", EXPVID_TASKS, *frames])  # fmt: skip
        assert exported.exit_code == 0, exported.output
        assert f"wrote {len(items)} sample(s)" in exported.output
        installed = subprocess.run(
            [str(inspect_python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
             "--disable-pip-version-check", str(tmp_path / "pkg")],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stderr
        # By its registry name: found through the package's `inspect_ai` entry point.
        _inspect_eval(inspect_python, "expvid_expvid/expvid", model.openai_base_url, tmp_path / "logs", tmp_path,
                      "--no-fail-on-error")  # fmt: skip
        sent_by_inspect = _asked(model.requests[asked_before:])

    assert len(sent_by_expvid) == len(items)
    assert sent_by_inspect == sent_by_expvid  # the same texts and the same frames, byte for byte

    scored = _expvid(inspect_python, "score", "--from", "inspect", "logs", "--out", "scored", "--quiet",
                     cwd=tmp_path)  # fmt: skip
    assert scored.returncode == 3, scored.stdout + scored.stderr  # the failed items, as expvid eval
    rows = {row["item"]: row for row in map(json.loads, (tmp_path / "scored" / "inspect_comparison.jsonl").read_text().splitlines())}  # fmt: skip
    expvid_eval = _item_scores(tmp_path / "run" / "item_scores.jsonl")
    from_inspect = _item_scores(tmp_path / "scored" / "item_scores.jsonl")
    assert rows.keys() == expvid_eval.keys() == from_inspect.keys()
    for item_id, row in rows.items():
        mine = expvid_eval[item_id]
        assert (from_inspect[item_id]["earned"], from_inspect[item_id]["status"]) == (
            mine["earned"],
            mine["status"],
        )
        if mine["status"] == "failed":  # Inspect logged the refused request as the sample's error: no score
            assert row["inspect"] is None and row["agree"] is None
            continue
        assert row["agree"] is True and row["inspect"] == mine["earned"] / mine["possible"], item_id
    assert {mine["status"] for mine in expvid_eval.values()} == {"ok", "unparseable", "failed"}
    assert 0 < sum(mine["earned"] for mine in expvid_eval.values()) < len(items)

    manifest = json.loads((tmp_path / "scored" / "manifest.json").read_text())
    assert manifest["model"] == "inspect:openai-api/loopback/loopback"
    ours_scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    theirs = json.loads((tmp_path / "scored" / "scores.json").read_text())
    for task in EXPVID_TASKS.split(","):
        assert theirs["tasks"][task]["score"] == pytest.approx(ours_scores["tasks"][task]["score"])
    assert (
        "| Model | Tool | Mat. | Quan. | Oper. | Avg. (Level-1) |" in scored.stdout
    )  # the paper's table (Table 2)
    agreement = re.findall(r"\| (\w+) \| (\d+) \| [\d.]+ \| [\d.]+ \| (\d+) \| (\d+) \|", scored.stdout)
    failed = sum(mine["status"] == "failed" for mine in expvid_eval.values())
    assert sum(int(agree) for *_, agree, _ in agreement) == len(items) - failed
    assert all(differ == "0" for *_, differ in agreement)


def test_an_llm_judge_decides_the_same_in_inspect_as_in_expvid(inspect_python, tmp_path) -> None:
    data = tmp_path / "mmvu"
    make_mmvu_sample(data)
    suite = get_suite("mmvu")
    items = suite.load(data).items
    with LoopbackServer(Model(items, suite, mmvu_answer)) as model, LoopbackServer(mmvu_judge) as judge:
        spec = f"openai:gpt-4o@{judge.openai_base_url}"
        ours = runner.invoke(app, ["eval", "--suite", "mmvu", "--data", str(data), "--frames", "all=2", "--judge", spec,
                                   "--model", f"openai:loopback@{model.openai_base_url}", "--out", str(tmp_path / "run"),
                                   "--no-cache", "--quiet"])  # fmt: skip
        assert ours.exit_code == 0, ours.output
        judged_by_expvid = sorted(r.texts[-1] for r in judge.requests)
        judged_before = len(judge.requests)
        exported = runner.invoke(app, ["export", "inspect", str(data), "--out", str(tmp_path / "pkg"),
                                       "--suite", "mmvu", "--frames", "all=2"])  # fmt: skip
        assert exported.exit_code == 0, exported.output
        # Not installed: Inspect runs the task file of the package folder.
        _inspect_eval(inspect_python, "pkg/expvid_mmvu/tasks.py", model.openai_base_url,
                      tmp_path / "logs", tmp_path, "-T", f"judge={spec}")  # fmt: skip
        judged_by_inspect = judge.requests[judged_before:]
        assert sorted(r.texts[-1] for r in judged_by_inspect) == judged_by_expvid  # the same judge prompts
        assert all(
            r.body["response_format"]["json_schema"]["name"] == "EvaluationOutput" for r in judged_by_inspect
        )
        scored = _expvid(inspect_python, "score", "--from", "inspect", "logs", "--out", "scored", "--quiet",
                         "--judge", spec, "--no-cache", cwd=tmp_path)  # fmt: skip
    assert scored.returncode == 0, scored.stdout + scored.stderr
    expvid_eval = _item_scores(tmp_path / "run" / "item_scores.jsonl")
    rows = [
        json.loads(line)
        for line in (tmp_path / "scored" / "inspect_comparison.jsonl").read_text().splitlines()
    ]
    assert len(rows) == len(items) == 8
    for row in rows:
        mine = expvid_eval[row["item"]]
        assert row["agree"] is True and row["inspect"] == mine["earned"] / mine["possible"]
    assert {mine["earned"] for mine in expvid_eval.values()} == {0.0, 1.0}
    assert "Avg. Validation" in scored.stdout  # Table 3's layout
    view = runner.invoke(app, ["view", str(tmp_path / "scored"), "--export", str(tmp_path / "view.html")])
    assert view.exit_code == 0, view.output
