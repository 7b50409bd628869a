"""The audit gate every recipe's build passes through: audit what is about to be released.

A recipe hands its output folder and the name of the suite that reads it (`RELEASE_SUITE` of the
recipe) to `gate_release`; nothing else of the recipe is needed. The folder is read exactly as
`expvid eval --suite NAME --data OUT` and `expvid audit` read it (the suite's own loader, through
`expvid.audit.audit_release`), so the gate audits the release as it will be evaluated, in the
suite's default evaluation setting (what that setting shows the model decides which solvers are
informational: `expvid.audit.setting`).

What it writes beside the build report: `audit.json`, `audit.md` and `audit.html` (docs/audit.md);
`build_report.json` gets an `audit_gate` section (`expvid.audit.gate.GateVerdict`) and
`build_report.md` the same as text. The build's outputs are never removed or changed: a release
that does not pass is kept, and marked as not passing in those three places, so that fixing the
recipe and re-running (every model call comes from the cache) or reviewing an exception costs
nothing already paid for.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from expvid.audit.engine import AuditOptions
from expvid.audit.gate import AcceptedFinding, GateVerdict, decide, verdict_markdown
from expvid.audit.release import audit_release
from expvid.audit.report_html import to_html
from expvid.audit.report_md import to_markdown
from expvid.audit.result import AuditReport
from expvid.construction.progress import NO_PROGRESS, ProgressSink
from expvid.construction.state import write_atomic
from expvid.schema import DataError

#: Exit status of `expvid build` when the release is written but the audit gate does not pass.
EXIT_GATE_FAILED = 6
#: The files the gate writes into the build's output folder.
AUDIT_FILES = ("audit.json", "audit.md", "audit.html")


class _Phase:
    def __init__(self, sink: ProgressSink, name: str) -> None:
        self.sink, self.name = sink, name

    def advance(self) -> None:
        self.sink.advance(self.name)


class _AuditProgress:
    """The audit's phases (`phase(name, total).advance()`) drawn as build phases."""

    def __init__(self, sink: ProgressSink) -> None:
        self.sink = sink

    def phase(self, name: str, total: int) -> _Phase:
        label = f"audit: {name}"
        self.sink.add(label, total)
        return _Phase(self.sink, label)


def audit_build(
    out: Path,
    suite: str,
    *,
    settings: dict[str, Any] | None = None,
    embeddings: bool = True,
    progress: ProgressSink = NO_PROGRESS,
) -> AuditReport:
    """The audit of the release in `out` (read by `suite` under its default, or the given, settings)."""
    return audit_release(
        out,
        suite=suite,
        settings=settings,
        options=AuditOptions(embeddings=embeddings),
        progress=_AuditProgress(progress),
        source=str(out),
    )


def gate_release(
    out: Path,
    suite: str,
    *,
    exceptions: Sequence[AcceptedFinding] = (),
    exceptions_file: Path | None = None,
    settings: dict[str, Any] | None = None,
    embeddings: bool = True,
    progress: ProgressSink = NO_PROGRESS,
) -> GateVerdict:
    """Audit the release in `out`, write the audit beside the build report, record the verdict.

    `exceptions`: reviewed exceptions (`expvid.audit.gate.read_exceptions` of `--accept-audit`).
    Raises `DataError` (file:line) for an exception that matches no flagged solver, after the audit
    files are written."""
    report = audit_build(out, suite, settings=settings, embeddings=embeddings, progress=progress)
    report.write(out / "audit.json")
    markdown = to_markdown(report)
    write_atomic(out / "audit.html", to_html(report))
    write_atomic(out / "audit.md", markdown)
    try:
        verdict = decide(report, list(exceptions), exceptions_file=exceptions_file)
    except DataError:
        # a stale or misspelt exception accepts nothing: the release is marked as the audit alone
        # decides, then the error is raised (file:line)
        _mark(out, decide(report), markdown)
        raise
    _mark(out, verdict, markdown)
    return verdict


def _mark(out: Path, verdict: GateVerdict, markdown: str) -> None:
    section = verdict_markdown(verdict, EXIT_GATE_FAILED)
    write_atomic(out / "audit.md", f"{section}\n{markdown}")
    _record(out, verdict, section)


def _record(out: Path, verdict: GateVerdict, section: str) -> None:
    """The verdict into build_report.json (`audit_gate`) and build_report.md (its last section)."""
    report_json = out / "build_report.json"
    if report_json.is_file():
        report = json.loads(report_json.read_text(encoding="utf-8"))
        report["audit_gate"] = {
            **verdict.model_dump(mode="json"),
            "exit_status": 0 if verdict.passed else EXIT_GATE_FAILED,
            "files": list(AUDIT_FILES),
        }
        write_atomic(report_json, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    report_md = out / "build_report.md"
    if report_md.is_file():
        text = report_md.read_text(encoding="utf-8")
        text = text.split("\n## Audit gate\n", 1)[0].rstrip("\n")  # a report rewritten by this run has none
        write_atomic(report_md, f"{text}\n\n{section}")
