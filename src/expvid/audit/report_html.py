"""`audit.html`: the audit as one self-contained page, with its plots (inline SVG, matplotlib):
each solver's accuracy against chance with its interval, per task, and the item flags per task."""

from __future__ import annotations

import html
import io
from collections import Counter

from expvid.audit.report_md import controls_lines, summary_line
from expvid.audit.result import CHECKS, AuditReport, SolverResult


def _svg(figure: object) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")  # type: ignore[attr-defined]
    plt.close(figure)  # type: ignore[arg-type]
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def solver_plot(task: str, solvers: list[SolverResult]) -> str:
    """Horizontal intervals: each solver's accuracy with its 95% CI, chance as a dashed line, the
    flagged ones in red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranked = sorted(solvers, key=lambda s: s.accuracy - s.chance)
    figure, axis = plt.subplots(figsize=(7.5, 0.9 + 0.22 * len(ranked)))
    for row, solver in enumerate(ranked):
        colour = (
            "#c0392b"
            if solver.flagged
            else ("#e67e22" if solver.beats_chance and solver.informational else "#34495e")
        )
        axis.plot([solver.ci_low * 100, solver.ci_high * 100], [row, row], color=colour, linewidth=1.5)
        axis.plot([solver.accuracy * 100], [row], "o", color=colour, markersize=4)
        axis.plot([solver.chance * 100], [row], "|", color="#7f8c8d", markersize=9)
    axis.set_yticks(range(len(ranked)), [f"{s.name} (n={s.n})" for s in ranked], fontsize=7)
    axis.set_xlim(0, 100)
    axis.set_xlabel(
        "accuracy % (95% CI; grey tick: chance; red: flagged after Holm; orange: informational in this setting)"
    )
    axis.set_title(task, fontsize=10)
    return _svg(figure)


def flags_plot(report: AuditReport) -> str:
    """Stacked bars: items per task by what flagged them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [task.task for task in report.tasks]
    counts = {
        task: Counter(flag for item in report.items if item.task == task for flag in item.flags)
        for task in tasks
    }
    kinds = sorted({flag for counter in counts.values() for flag in counter})
    figure, axis = plt.subplots(figsize=(max(6.0, 0.8 * len(tasks) + 2), 3.6))
    bottom = [0] * len(tasks)
    for kind in kinds:
        values = [counts[task][kind] for task in tasks]
        axis.bar(tasks, values, bottom=bottom, label=kind)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    axis.plot(tasks, [task.items for task in report.tasks], "k_", markersize=18, label="items in the task")
    axis.set_ylabel("items (an item may have several flags)")
    axis.tick_params(axis="x", labelrotation=30, labelsize=8)
    if kinds:
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axis.set_title("item flags per task", fontsize=10)
    return _svg(figure)


def to_html(report: AuditReport) -> str:
    escape = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Validity audit: {escape(report.suite or 'release')}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px}"
        ".flag{color:#c0392b;font-weight:bold}code{word-break:break-all}</style></head><body>",
        f"<h1>Validity audit: {escape(report.suite or 'release')}</h1>",
        f"<p><code>{escape(report.data or '')}</code></p>",
        f"<p>{escape(summary_line(report))}</p>",
        "<h2>Item flags per task</h2>",
        flags_plot(report),
        "<h2>Solvers per task</h2>",
    ]
    by_task: dict[str, list[SolverResult]] = {}
    for solver in report.solvers:
        by_task.setdefault(solver.task, []).append(solver)
    for task, solvers in by_task.items():
        flagged = [s.name for s in solvers if s.flagged]
        parts.append(f"<h3>{escape(task)}</h3>")
        if flagged:
            parts.append(f"<p class='flag'>flagged: {escape(', '.join(flagged))}</p>")
        for solver in solvers:
            if solver.beats_chance and solver.informational:
                parts.append(
                    f"<p>informational: {escape(solver.name)} ({solver.accuracy:.1%}): "
                    f"{escape(solver.informational)}</p>"
                )
        parts.append(solver_plot(task, solvers))
    parts += [
        "<h2>Flagged items</h2>",
        "<table><tr><th>item</th><th>task</th><th>flags</th><th>why</th></tr>",
    ]
    for item in report.flagged_items:
        why = "<br>".join(escape(item.reasons.get(flag, "")) for flag in item.flags)
        parts.append(
            f"<tr><td>{escape(item.id)}</td><td>{escape(item.task)}</td><td>{escape(', '.join(item.flags))}</td><td>{why}</td></tr>"
        )
    parts.append("</table>")
    extra = controls_lines(report)
    if extra:
        parts += ["<h2>Controls and item analysis</h2>", f"<pre>{escape(chr(10).join(extra))}</pre>"]
    parts.append("<h2>Checks</h2><ul>")
    parts += [f"<li><b>{escape(name)}</b>: {escape(text)}</li>" for name, text in CHECKS.items()]
    parts.append("</ul>")
    if report.notes:
        parts += ["<h2>Notes</h2><ul>", *(f"<li>{escape(n)}</li>" for n in report.notes), "</ul>"]
    parts.append("</body></html>")
    return "\n".join(parts)
