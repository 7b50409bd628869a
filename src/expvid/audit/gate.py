"""The release gate: does an audit let a release go out, and which reviewed exceptions let it through.

A release passes when no solver is flagged (`AuditReport.flagged_solvers`: beats chance after the
correction and reads only what the evaluated model is given; solvers that read what the suite's
setting does not show are informational and never block). A flagged solver blocks the release
unless a reviewed exception file accepts it with a reason:

```yaml
# audit exceptions for <release>, reviewed by <who> on <date>
accept:
  - solver: "longest option"     # the name as audit.json and audit.md write it
    task: operation              # optional: without it, the solver on every task
    reason: "the correct operations are longer by design: each names the tool; reviewed 2025-06-01"
```

JSON with the same shape (`{"accept": [{"solver": ..., "reason": ...}]}`, or the bare list) is read
too. Every entry must name a solver and give a non-empty reason, and must match a solver the audit
flags: an entry that matches nothing is stale (the defect was fixed, or the name is misspelt) and is
an error naming the file and the entry's line, as is an entry without a reason. Item flags (twin
options, a time range, the answer in the question) go to the reviewers with each item; they do not
block the release (an item is fixed or rejected on the review platform).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from expvid.audit.result import AuditReport, SolverResult
from expvid.schema import DataError, RecordProblem

#: Keys an exception entry may have.
ENTRY_KEYS = ("solver", "task", "reason")


class AcceptedFinding(BaseModel):
    """One reviewed exception: `solver` (on `task`, or on every task) may be flagged, for `reason`."""

    solver: str
    task: str | None = None
    reason: str
    file: str
    line: int

    def matches(self, solver: SolverResult) -> bool:
        return solver.name == self.solver and (self.task is None or solver.task == self.task)

    def where(self) -> str:
        return f"{self.file}:{self.line}"


class SolverFinding(BaseModel):
    """A solver's result as the gate reports it."""

    solver: str
    task: str
    family: str
    accuracy: float
    chance: float
    n: int
    #: The exception that accepted it (file:line and reason), or why it is informational.
    accepted: str | None = None
    reason: str | None = None

    @classmethod
    def of(cls, solver: SolverResult, **extra: Any) -> SolverFinding:
        return cls(
            solver=solver.name,
            task=solver.task,
            family=solver.family,
            accuracy=solver.accuracy,
            chance=solver.chance,
            n=solver.n,
            **extra,
        )

    def describe(self) -> str:
        return f"{self.solver} on {self.task}: {self.accuracy:.1%} (chance {self.chance:.1%}, n={self.n})"


class GateVerdict(BaseModel):
    """What the gate decided (the build report's `audit_gate` section)."""

    passed: bool
    #: Flagged solvers no exception accepts: the release does not pass while any is left.
    blocking: list[SolverFinding] = Field(default_factory=list)
    #: Flagged solvers an exception accepts, with the exception's place and reason.
    accepted: list[SolverFinding] = Field(default_factory=list)
    #: Solvers that beat chance but read what the evaluated model is not given (never block).
    informational: list[SolverFinding] = Field(default_factory=list)
    #: Items flagged by a check or a flagged solver (they go to review with their reasons).
    flagged_items: int = 0
    items: int = 0
    exceptions_file: str | None = None


def _problem(path: Path, line: int, message: str) -> DataError:
    return DataError([RecordProblem(path, line, message)])


def _compose(path: Path, text: str) -> Any:
    """The document's node tree (for line numbers); JSON is read as JSON first, for its own errors."""
    if path.suffix.lower() == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            raise _problem(path, error.lineno, f"not valid JSON ({error.msg})") from None
        text = text.replace("\t", " ")  # raw tabs are whitespace in valid JSON; YAML refuses them
    try:
        return yaml.compose(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise _problem(path, line, f"not valid YAML ({getattr(error, 'problem', None) or error})") from None


def read_exceptions(path: Path) -> list[AcceptedFinding]:
    """The entries of an exception file (module docstring); `DataError` naming file:line for a
    malformed one. Whether each matches a flagged solver is checked by `decide`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise DataError(f"{path}: cannot read the audit exception file ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error.reason})") from None
    root = _compose(path, text)
    entries = root
    if isinstance(root, yaml.MappingNode):
        keys = {key.value: value for key, value in root.value}
        if set(keys) != {"accept"}:
            raise _problem(path, root.start_mark.line + 1, "expected one key, `accept:`, holding a list")
        entries = keys["accept"]
    if not isinstance(entries, yaml.SequenceNode):
        line = entries.start_mark.line + 1 if entries is not None else 1
        raise _problem(path, line, "expected a list of exceptions (`accept:` and `- solver: ...` entries)")
    problems: list[RecordProblem] = []
    found: list[AcceptedFinding] = []
    for node in entries.value:
        line = node.start_mark.line + 1
        fields = _entry_fields(node)
        if isinstance(fields, str):
            problems.append(RecordProblem(path, line, fields))
            continue
        solver, reason = fields.get("solver", "").strip(), fields.get("reason", "").strip()
        if not solver:
            problems.append(RecordProblem(path, line, "the exception names no solver (`solver:`)"))
        elif not reason:
            problems.append(
                RecordProblem(path, line, f"the exception for {solver!r} gives no reason (`reason:`)")
            )
        else:
            task = fields.get("task", "").strip() or None
            found.append(AcceptedFinding(solver=solver, task=task, reason=reason, file=str(path), line=line))
    if problems:
        raise DataError(problems)
    return found


def _entry_fields(node: Any) -> dict[str, str] | str:
    """The entry's text fields, or what is wrong with it."""
    if not isinstance(node, yaml.MappingNode):
        return "an exception must be a mapping with `solver`, `reason` and optionally `task`"
    fields: dict[str, str] = {}
    for key, value in node.value:
        name = str(key.value)
        if name not in ENTRY_KEYS:
            return f"unknown key {name!r} (an exception has {', '.join(ENTRY_KEYS)})"
        if not isinstance(value, yaml.ScalarNode):
            return f"`{name}` must be text"
        fields[name] = str(value.value)
    return fields


def decide(
    report: AuditReport, exceptions: Sequence[AcceptedFinding] = (), *, exceptions_file: Path | None = None
) -> GateVerdict:
    """The gate's verdict on `report`; `DataError` naming file:line for an exception that matches
    no flagged solver (stale or misspelt: nothing is accepted by accident)."""
    unmatched = [entry for entry in exceptions if not any(entry.matches(s) for s in report.flagged_solvers)]
    if unmatched:
        raise DataError(
            [
                RecordProblem(
                    Path(entry.file),
                    entry.line,
                    f"the exception for {entry.solver!r}"
                    + (f" on {entry.task!r}" if entry.task else "")
                    + " matches no flagged solver of this audit (flagged: "
                    + (", ".join(f"{s.name} on {s.task}" for s in report.flagged_solvers) or "none")
                    + "); remove it",
                )
                for entry in unmatched
            ]
        )
    blocking, accepted = [], []
    for solver in report.flagged_solvers:
        entry = next((e for e in exceptions if e.matches(solver)), None)
        if entry is None:
            blocking.append(SolverFinding.of(solver))
        else:
            accepted.append(SolverFinding.of(solver, accepted=entry.where(), reason=entry.reason))
    return GateVerdict(
        passed=not blocking,
        blocking=blocking,
        accepted=accepted,
        informational=[
            SolverFinding.of(solver, reason=solver.informational) for solver in report.informational_solvers
        ],
        flagged_items=len(report.flagged_items),
        items=len(report.items),
        exceptions_file=str(exceptions_file) if exceptions_file is not None else None,
    )


def verdict_markdown(verdict: GateVerdict, exit_status: int) -> str:
    """The gate's section of a build report (Markdown)."""
    state = "passed" if verdict.passed else f"**NOT PASSED** (exit status {exit_status})"
    lines = [
        "## Audit gate",
        "",
        f"The release {state}: {len(verdict.blocking)} flagged solver(s) not accepted, "
        f"{len(verdict.accepted)} accepted by a reviewed exception, {len(verdict.informational)} "
        f"informational; {verdict.flagged_items} of {verdict.items} item(s) flagged for review. "
        "The audit is in audit.json, audit.md and audit.html (docs/audit.md).",
        "",
    ]
    for title, findings in (
        ("Blocking", verdict.blocking),
        ("Accepted", verdict.accepted),
        ("Informational in this setting", verdict.informational),
    ):
        if findings:
            lines += [f"{title}:", ""]
            for finding in findings:
                extra = ""
                if finding.accepted:
                    extra = f" (accepted by {finding.accepted}: {finding.reason})"
                elif finding.reason:
                    extra = f" ({finding.reason})"
                lines.append(f"- {finding.describe()}{extra}")
            lines.append("")
    return "\n".join(lines)
