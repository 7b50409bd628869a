"""docs/build_promqa.md's sample figures come from its documented commands: they are run here.

The table "Sample figures" lists each command and what it reports. The sample is made with
`expvid sample make`, the two dry runs are run as written, and the build is the same command with
the model's server pointed at the scripted generator on loopback (every reply usable).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from promqa_lab import PromqaLab
from typer.testing import CliRunner

from expvid.audit import read_audit
from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "build_promqa.md"
LLM = "openai:gpt-4o-2024-08-06"


def _figures() -> dict[str, str]:
    """command cell -> result cell of the doc's "Sample figures" table."""
    section = DOC.read_text(encoding="utf-8").split("## Sample figures", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {row[0].strip("| `"): row[1].strip(" |") for row in rows[1:]}


def _dry_run(runner: CliRunner, sources: Path, out: Path, *extra: str) -> str:
    result = runner.invoke(app, ["build", str(sources), "--recipe", "promqa", "--out", str(out), "--llm", LLM,
                                 "--price", "llm=2.5,10", "--dry-run", *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    total = next(line for line in result.output.splitlines() if line.startswith("| total"))
    cells = [c.strip() for c in total.strip("|").split("|")]
    calls, tokens_in, tokens_out, usd = int(cells[3]), int(cells[4]), int(cells[5]), float(cells[6])
    return f"{calls} calls, {tokens_in:,} tokens in, {tokens_out:,} out: ${usd:.4f}"


def test_the_sample_figures_are_what_the_documented_commands_give(tmp_path: Path) -> None:
    figures = _figures()
    runner = CliRunner()
    made = runner.invoke(app, ["sample", "make", str(tmp_path / "pq"), "--suite", "promqa"])
    assert made.exit_code == 0, made.output
    sources, out = tmp_path / "pq" / "sources", tmp_path / "cand"
    default = next(k for k in figures if k.endswith("--dry-run"))
    assert _dry_run(runner, sources, out) == figures[default]
    assert (
        _dry_run(runner, sources, out, "-R", "template=video-dot")
        == figures["the same with `-R template=video-dot"]
    )
    with LoopbackServer(PromqaLab()) as server:
        built = runner.invoke(app, ["build", str(sources), "--recipe", "promqa", "--out", str(out), "--llm",
                                    f"{LLM}@{server.openai_base_url}", "--price", "llm=2.5,10", "--quiet"])  # fmt: skip
        assert built.exit_code == 0, built.output
        calls = len(server.requests)
    report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    assert (
        f"{report['total_items']} candidates from {calls} calls"
        == figures["the same without `--dry-run`, every reply usable"]
    )
    gate = report["audit_gate"]  # the build audited its release: the gate, with no exception file
    audit = read_audit(out)
    assert built.exit_code == 0 and gate["passed"] and "audit gate: passed" in built.output
    assert (
        f"{'passed' if gate['passed'] else 'NOT PASSED'}: {gate['items']} items audited, "
        f"{len(audit.solvers)} (solver, task) tests, {gate['flagged_items']} items flagged"
        == figures["the audit gate of that build (`audit.json` beside `build_report.json`)"]
    )
    sample = figures["expvid sample make pq --suite promqa"]
    recordings, examples, sampled = map(int, re.findall(r"\d+", sample))
    assert (report["corpus"]["recordings"], report["examples"]["total"], report["sampling"]["total"]) == (
        recordings, examples, sampled,
    )  # fmt: skip
