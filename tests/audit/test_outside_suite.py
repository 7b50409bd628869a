"""An outside plug-in suite (docs/write-a-suite.md's TinyQA, pip-installed into its own environment)
audited through its entry point and the suites' public API only."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def _expvid(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "expvid.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_an_outside_suite_runs_through_the_audit(tinyqa_python: Path, tmp_path: Path) -> None:
    made = _expvid(tinyqa_python, "sample", "make", "data", "--suite", "tinyqa", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    records = [json.loads(line) for line in (tmp_path / "data" / "questions.jsonl").read_text().splitlines()]
    for i in range(60):  # a release whose correct option is always the longer one, letters balanced
        long, short = f"Water from wash bottle {i}", f"Oil {i}"
        options = {"A": long, "B": short} if i % 2 else {"A": short, "B": long}
        records.append(
            {"id": f"m{i}", "video": "videos/v1.mp4", "question": f"What is poured in step {i}?",
             "options": options, "answer": "A" if i % 2 else "B"}
        )  # fmt: skip
    (tmp_path / "data" / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    audited = _expvid(tinyqa_python, "audit", "--suite", "tinyqa", "--data", "data", "--out", "audit",
                      "--no-embeddings", "--fail-on-flag", "--quiet", cwd=tmp_path)  # fmt: skip
    assert audited.returncode == 1, audited.stderr
    report = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert report["suite"] == "tinyqa"
    assert {item["id"] for item in report["items"]} == {r["id"] for r in records}
    flagged = {(s["name"], s["task"]) for s in report["solvers"] if s["flagged"]}
    assert ("longest option", "choice") in flagged and ("letter prior", "choice") not in flagged
    assert not [s for s in report["solvers"] if s["task"] == "open"]
