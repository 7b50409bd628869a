"""`expvid build` audits what it releases: the sample build passes the gate with no exception file; a
planted shortcut (the lab drafting its answers in another form than their distractors) makes the
build exit 6 with everything kept, and a reviewed exception file lets it through."""

from __future__ import annotations

import json
from pathlib import Path

from svb_helpers import SvbBuild
from svb_lab import SvbLab
from typer.testing import CliRunner

from expvid.audit import read_audit
from expvid.cli.main import app
from expvid.construction.release_gate import EXIT_GATE_FAILED
from expvid.fakes.models.server import LoopbackServer
from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer

#: Enough conceptual questions (3 per experiment) for a text-only solver to beat chance after the
#: audit's correction when every one of them gives its answer away.
PER_TYPE = "per_type=conceptual:3,hypothetical:1,quantitative:1"


def _args(sources: Path, out: Path, llm: LoopbackServer, stt: TranscriptionServer, *extra: str) -> list[str]:
    return [
        "build", str(sources), "--recipe", "scivideobench", "--out", str(out),
        "--llm", f"openai:lab-r1@{llm.openai_base_url}", "--blind-samples", "1",
        "--backend-option", "max_retries=0", "--quiet", "-R", f"stt=openai:whisper-1@{stt.openai_base_url}",
        "-R", PER_TYPE, "-R", "frames=2", "-R", "frame_max_side=96", *extra,
    ]  # fmt: skip


def _gate(out: Path) -> dict:  # type: ignore[type-arg]
    gate: dict = json.loads((out / "build_report.json").read_text(encoding="utf-8"))["audit_gate"]  # type: ignore[type-arg]
    return gate


def test_the_sample_build_passes_the_gate_without_an_exception_file(svb_build: SvbBuild) -> None:
    gate = _gate(svb_build.out)
    assert gate["passed"] and gate["exit_status"] == 0 and not gate["blocking"] and not gate["accepted"]
    assert gate["items"] == svb_build.report["total_items"]
    audit = read_audit(svb_build.out)
    assert audit.suite == "scivideobench" and len(audit.items) == gate["items"]
    assert (svb_build.out / "audit.html").is_file() and "audit gate: passed" in svb_build.output
    assert (
        (svb_build.out / "build_report.md")
        .read_text(encoding="utf-8")
        .rstrip()
        .endswith("The audit is in audit.json, audit.md and audit.html (docs/audit.md).")
    )


def test_a_planted_shortcut_fails_the_gate_and_a_reviewed_exception_lets_it_through(
    speech_sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cand"
    runner = CliRunner()
    with (
        LoopbackServer(SvbLab(templated_distractors=True)) as llm,
        TranscriptionServer(TranscriptionScript()) as stt,
    ):
        failed = runner.invoke(app, _args(speech_sources, out, llm, stt))
        assert failed.exit_code == EXIT_GATE_FAILED, failed.output
        sent = len(llm.requests)
        gate = _gate(out)
        blocking = {(f["solver"], f["task"]) for f in gate["blocking"]}
        assert ("shortest option", "conceptual") in blocking, blocking
        assert not gate["passed"] and gate["exit_status"] == EXIT_GATE_FAILED
        assert "audit gate: NOT PASSED" in failed.output and "--accept-audit" in failed.output
        # nothing is lost: the release is written, marked as not passing
        released = (out / "scivideobench_1k.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(released) == gate["items"] == 10
        assert "**NOT PASSED** (exit status 6)" in (out / "audit.md").read_text(encoding="utf-8")
        assert "**NOT PASSED**" in (out / "build_report.md").read_text(encoding="utf-8")

        # an exception without a reason is refused before anything is asked
        lazy = tmp_path / "lazy.yaml"
        lazy.write_text("accept:\n  - solver: shortest option\n    task: conceptual\n", encoding="utf-8")
        refused = runner.invoke(app, _args(speech_sources, out, llm, stt, "--accept-audit", str(lazy)))
        assert (
            refused.exit_code == 2
            and f"{lazy}:2: the exception for 'shortest option' gives no reason"
            in (" ".join(refused.output.split()))
        ), refused.output
        assert len(llm.requests) == sent

        reviewed = tmp_path / "reviewed.yaml"
        lines = ["# reviewed by the curation lead", "accept:"]
        for solver, task in sorted(blocking):
            lines += [
                f'  - solver: "{solver}"',
                f"    task: {task}",
                "    reason: accepted for this test only",
            ]
        reviewed.write_text("\n".join(lines) + "\n", encoding="utf-8")
        passed = runner.invoke(app, _args(speech_sources, out, llm, stt, "--accept-audit", str(reviewed)))
        assert passed.exit_code == 0, passed.output
        assert len(llm.requests) == sent  # the re-run asked nothing: every reply came from the cache
        gate = _gate(out)
        assert gate["passed"] and {(f["solver"], f["task"]) for f in gate["accepted"]} == blocking
        assert all(f["accepted"].startswith(f"{reviewed}:") for f in gate["accepted"])

        # an exception that matches nothing flagged is stale: refused, naming its line
        stale = tmp_path / "stale.yaml"
        stale.write_text(
            reviewed.read_text(encoding="utf-8") + "  - solver: roundest value\n    reason: old finding\n",
            encoding="utf-8",
        )
        refused = runner.invoke(app, _args(speech_sources, out, llm, stt, "--accept-audit", str(stale)))
        flat = " ".join(refused.output.split())
        assert (
            refused.exit_code == 2 and f"{stale}:{len(lines) + 1}: the exception for 'roundest value'" in flat
        )
        assert (out / "scivideobench_1k.jsonl").read_text(encoding="utf-8").splitlines() == released
        assert not _gate(out)["passed"]  # a file with a stale entry accepts nothing: marked as not passing

    # the same build drafted with answers and distractors in one form passes with no exception file
    with LoopbackServer(SvbLab()) as llm, TranscriptionServer(TranscriptionScript()) as stt:
        clean = runner.invoke(app, _args(speech_sources, tmp_path / "clean", llm, stt))
    assert clean.exit_code == 0, clean.output
    assert _gate(tmp_path / "clean")["passed"] and _gate(tmp_path / "clean")["items"] == 10
