"""`audit.md`: the audit for a reader: flagged solvers, the best solvers per task, flagged items,
controls and item analysis. Every number comes from the `AuditReport` (audit.json)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from expvid.audit.result import CHECKS, AuditReport, SolverResult

#: Solvers listed per task besides the flagged ones (by accuracy above chance).
TOP_PER_TASK = 5
#: Flagged items listed (all are in audit.json).
ITEMS_SHOWN = 200


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _solver_row(solver: SolverResult) -> str:
    return (
        f"| {solver.task} | {solver.name} | {_pct(solver.accuracy)} | {_pct(solver.chance)} | "
        f"{_pct(solver.ci_low)}–{_pct(solver.ci_high)} | {solver.n} | {solver.p_holm:.2g} | "
        f"{'**yes**' if solver.flagged else ('informational' if solver.informational and solver.beats_chance else 'no')} |"
    )


_HEADER = "| task | solver | accuracy % | chance % | 95% CI | n | Holm p | flagged |\n| --- | --- | ---: | ---: | --- | ---: | ---: | --- |"


def summary_line(report: AuditReport) -> str:
    flagged = report.flagged_items
    share = len(flagged) / len(report.items) if report.items else 0.0
    informational = len(report.informational_solvers)
    return (
        f"{len(report.items)} item(s) in {len(report.tasks)} task(s); {len(report.solvers)} (solver, task) test(s), "
        f"{len(report.flagged_solvers)} flagged"
        + (f" ({informational} more informational in this setting)" if informational else "")
        + f"; {len(flagged)} item(s) flagged ({share:.1%})"
    )


def to_markdown(report: AuditReport) -> str:
    lines = [f"# Validity audit: {report.suite or 'release'}", ""]
    if report.data:
        lines += [
            f"Data: `{report.data}`"
            + (f" (annotations {report.fingerprint[:12]})" if report.fingerprint else ""),
            "",
        ]
    lines += [summary_line(report), ""]
    lines += [
        f"A solver is flagged when its accuracy beats chance after Holm's correction over all {len(report.solvers)} "
        f"tests (family-wise α = {report.settings.get('alpha', 0.05)}); intervals are exact (Clopper-Pearson). "
        "See docs/audit.md for what each solver and check looks at.",
        "",
    ]
    lines += ["## Flagged solvers", ""]
    if report.flagged_solvers:
        lines += [_HEADER, *(_solver_row(s) for s in report.flagged_solvers), ""]
    else:
        lines += ["None: no text-only solver beats chance on any task after the correction.", ""]
    if report.informational_solvers:
        lines += [
            "## Informational in this setting",
            "",
            "These beat chance but read what the suite's evaluation setting does not give the model; "
            'they flag no item (docs/audit.md, "The evaluation setting"): '
            + (report.informational_solvers[0].informational or ""),
            "",
            _HEADER,
            *(_solver_row(s) for s in report.informational_solvers),
            "",
        ]
    lines += ["## Best solvers per task", "", _HEADER]
    by_task: dict[str, list[SolverResult]] = {}
    for solver in report.solvers:
        by_task.setdefault(solver.task, []).append(solver)
    for solvers in by_task.values():
        ranked = sorted(solvers, key=lambda s: (s.accuracy - s.chance, s.n), reverse=True)
        shown = [s for s in ranked if s.flagged] + [s for s in ranked if not s.flagged][:TOP_PER_TASK]
        lines += [_solver_row(s) for s in shown]
    lines.append("")
    lines += [
        "## Tasks",
        "",
        "| task | items | choice items | mean chance % | flagged items | flagged solvers |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for task in report.tasks:
        lines.append(
            f"| {task.task} | {task.items} | {task.choice_items} | {_pct(task.mean_chance)} | {task.flagged_items} | "
            f"{', '.join(task.flagged_solvers) or '–'} |"
        )
    lines.append("")
    counts = Counter(flag for item in report.items for flag in item.flags)
    lines += ["## Item flags", ""]
    if counts:
        lines += ["| flag | items | what it means |", "| --- | ---: | --- |"]
        for flag, n in counts.most_common():
            lines.append(
                f"| {flag} | {n} | {CHECKS.get(flag, 'a flagged solver picks the correct option')} |"
            )
        lines += ["", "| item | task | flags | why |", "| --- | --- | --- | --- |"]
        for item in report.flagged_items[:ITEMS_SHOWN]:
            why = "; ".join(item.reasons.get(flag, "") for flag in item.flags).replace("|", "\\|")
            lines.append(f"| {item.id} | {item.task} | {', '.join(item.flags)} | {why} |")
        if len(report.flagged_items) > ITEMS_SHOWN:
            lines.append(f"\n… and {len(report.flagged_items) - ITEMS_SHOWN} more in audit.json")
    else:
        lines.append("No item is flagged.")
    lines.append("")
    lines += controls_lines(report)
    if report.problems or report.notes:
        lines += [
            "## Notes",
            "",
            *(f"- {note}" for note in report.notes),
            *(f"- record: {p}" for p in report.problems),
            "",
        ]
    return "\n".join(lines)


def controls_lines(report: AuditReport) -> list[str]:
    """The controls and item-analysis sections (empty without runs)."""
    lines: list[str] = []
    if report.controls:
        lines += _controls(report.controls)
    if report.item_analysis:
        lines += _analysis(report.item_analysis)
    return lines


def _value(entry: dict[str, Any], key: str, field: str = "accuracy") -> str:
    found = entry.get(key)
    return _pct(found.get(field)) if isinstance(found, dict) and field in found else "–"


def _controls(controls: dict[str, Any]) -> list[str]:
    lines = [
        "## Controls from runs",
        "",
        "Runs: " + "; ".join(f"{r['model']} ({r['control']})" for r in controls["runs"]),
        "",
    ]
    lines += [
        "| task | model | full % | no frames % | one frame % | shuffled % | gain (pts) | leakage | order (pts) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for entry in controls["tasks"]:
        leak = entry.get("leakage")
        leakage = (
            "–" if not leak else ("**yes**" if leak["leaks"] else "no") + f" (chance {_pct(leak['chance'])})"
        )
        gain = entry.get("multimodal_gain", {}).get("value")
        order = entry.get("order_sensitivity", {}).get("value")
        lines.append(
            f"| {entry['task']} | {entry['model']} | {_value(entry, 'full')} | {_value(entry, 'none')} | "
            f"{_value(entry, 'single')} | {_value(entry, 'shuffled')} | {_pct(gain)} | {leakage} | {_pct(order)} |"
        )
    return [*lines, ""]


def _analysis(analysis: dict[str, Any]) -> list[str]:
    lines = [
        "## Item analysis across models",
        "",
        f"Models (frames: full): {', '.join(analysis['models'])}",
        "",
    ]
    lines += [
        "| task | mean difficulty (share correct) | distractors no model picks |",
        "| --- | ---: | ---: |",
    ]
    for task, entry in analysis["tasks"].items():
        share = entry.get("unpicked_distractor_share")
        lines.append(
            f"| {task} | {entry['mean_difficulty']:.2f} | {'–' if share is None else f'{share:.0%}'} |"
        )
    negative = [(i, e) for i, e in analysis["items"].items() if (e.get("discrimination") or 0) < 0]
    if negative:
        lines += [
            "",
            f"{len(negative)} item(s) with negative discrimination (weaker models right, stronger wrong).",
        ]
    return [*lines, ""]
