"""docs/write-a-suite.md is two working suites: its blocks are the packages (TinyQA; TinyMC, a parquet
release without a judge), pip installs them into a fresh virtual environment, and expvid finds them by
their entry points and runs them end to end.

The new environment sees the developer's expvid through a `.pth` file (`site.addsitedir` of the test's
own environment), so the test installs nothing from a registry; the tiny package itself is built and
installed by pip from a temporary folder, exactly as a user would install a suite package.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import write_a_suite_docs
from expvid.fakes.models.server import LoopbackServer, Reply

DOCS = write_a_suite_docs.DOCS


def _blocks() -> dict[str, str]:
    return write_a_suite_docs.blocks()


def test_the_page_shows_the_example_packages_as_committed() -> None:
    blocks = _blocks()
    example = DOCS / "examples"
    assert {name.split("/")[0] for name in blocks} == {"tinyqa", "tinymc"}
    committed = {
        p.relative_to(example).as_posix()
        for p in example.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert set(blocks) == committed
    for name, text in blocks.items():
        assert (example / name).read_text(encoding="utf-8") == text, name


@pytest.fixture(scope="module")
def venv(tinyqa_python: Path) -> Path:
    """A fresh virtual environment with the page's packages pip-installed into it (tests/conftest.py)."""
    return tinyqa_python


def _expvid(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "expvid.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_a_separately_installed_suite_is_found_and_runs(venv: Path, tmp_path: Path) -> None:
    listed = _expvid(venv, "suites", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "tinyqa  TinyQA: a tiny video QA example suite  [tinyqa.suite]" in listed.stdout.splitlines()
    shown = _expvid(venv, "suites", "show", "tinyqa", cwd=tmp_path)
    assert "hint = false  (bool)" in shown.stdout and "source: TinyQA §2" in shown.stdout

    made = _expvid(venv, "sample", "make", "data", "--suite", "tinyqa", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    checked = _expvid(venv, "data", "check", "data", "--suite", "tinyqa", cwd=tmp_path)
    assert checked.returncode == 0 and "no problems" in checked.stdout, checked.stdout + checked.stderr
    with LoopbackServer(lambda request: Reply.ok("correct")) as judge:  # its own judge prompt, over HTTP
        run = _expvid(venv, "eval", "--suite", "tinyqa", "--data", "data", "--model", "random", "--out", "run",
                      "--no-cache", "--quiet", "-S", "hint=true", "--judge", f"openai:judge@{judge.openai_base_url}",
                      cwd=tmp_path)  # fmt: skip
        assert run.returncode == 0, run.stderr
        (asked,) = judge.requests
        assert (
            asked.body["messages"][0]["content"]
            == "You grade answers to questions about a video. Reply with one word: correct or wrong.\n"
        )
        assert asked.texts[-1].startswith("Question: Which tool stirs?\nReference answer: a glass rod\n")
    assert "| Model | MC | Open | Avg. (Overall) |" in run.stdout
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["suite"] == "tinyqa" and manifest["config"]["suite_settings"] == {"hint": True}
    prompts = [
        json.loads(line)["meta"]["prompt"]
        for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    assert all(p.startswith("This is a lab demonstration.\nQuestion: ") for p in prompts)
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["levels"]["Overall"]["n"] == 2 and scores["tasks"]["open"]["score"] == 100.0

    refused = _expvid(venv, "eval", "--suite", "tinyqa", "--data", "data", "--model", "random", "--out", "run",
                      "--no-cache", "--quiet", "-S", "hint=false", cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 2 and "suite_settings.hint: run has True, now False" in refused.stderr
    bad = _expvid(venv, "eval", "--suite", "tinyqa", "--data", "data", "--model", "random", "--out", "x",
                  "-S", "hints=true", cwd=tmp_path)  # fmt: skip
    assert bad.returncode == 2 and "unknown tinyqa setting 'hints' (did you mean 'hint'?)" in bad.stderr


def test_a_parquet_suite_without_a_judge_runs_at_the_source_size(venv: Path, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    made = _expvid(venv, "sample", "make", "data", "--suite", "tinymc", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    checked = _expvid(venv, "data", "check", "data", "--suite", "tinymc", cwd=tmp_path)
    assert checked.returncode == 0 and "no problems" in checked.stdout, checked.stdout + checked.stderr
    with LoopbackServer(lambda request: Reply.ok("correct")) as judge:  # given, and not used
        run = _expvid(venv, "eval", "--suite", "tinymc", "--data", "data", "--model", "random", "--out", "run",
                      "--no-cache", "--quiet", "--judge", f"openai:judge@{judge.openai_base_url}",
                      cwd=tmp_path)  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert judge.requests == []
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["judge"] is None
    samplers = manifest["samplers"]
    assert {name: (s["size"], s["max_side"]) for name, s in samplers.items()} == {
        "perception": (None, None),
        "reasoning": (None, None),
    }  # the source size: no 224x224 squash for a suite that declares no resolution
    predictions = [
        json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    assert sorted(p["item_id"] for p in predictions) == ["001-1", "001-2", "002-1"]  # ids from question_id
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert set(scores["disciplines"]) == {"Chemistry", "Biology"}
    assert scores["disciplines"]["Chemistry"]["tasks"]["perception"]["n"] == 1

    table = pq.read_table(tmp_path / "data" / "videomme" / "test-00000-of-00001.parquet").to_pylist()
    pq.write_table(
        pa.Table.from_pylist([*table, table[0]]),
        tmp_path / "data" / "videomme" / "test-00000-of-00001.parquet",
    )
    duplicate = _expvid(venv, "data", "check", "data", "--suite", "tinymc", cwd=tmp_path)
    assert duplicate.returncode == 1
    assert (
        "test-00000-of-00001.parquet:4: duplicate question_id '001-1' (first on line 1)" in duplicate.stdout
    )
