"""Dashboard charts drawn on the server as inline SVG: no script, no CDN, works offline and under the
page's content security policy (presentation attributes, no inline styles).

Each chart is a `Markup` string with a `<title>` per data point (shown on hover) and a caption that
states the numbers, so the chart never holds information the page does not also say in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from markupsafe import Markup, escape

from expvid.platform.services.agreement import Agreement
from expvid.platform.services.reports import Activity, AnnotatorStats

WIDTH = 640
COLORS = {"decisions": "#4c78a8", "verified": "#1a7f37", "rejected": "#d4380d", "goal": "#8c959f"}


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float]
    color: str


def _svg(height: int, label: str, body: list[str], testid: str) -> Markup:
    return Markup(
        f'<svg class="chart" data-testid="{escape(testid)}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(label)}" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(label)}</title>{''.join(body)}</svg>"
    )


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000):
        if value <= step:
            return float(step)
    return float(value)


def progress_chart(activity: Activity) -> Markup:
    """Cumulative decisions and settled items over time, with the number of items as the goal line.

    Points sit at the end of each bin (and a zero at the start of the first), so a single busy hour
    still draws as a line from nothing to where the work stands.
    """
    height, left, right, top, bottom = 220, 48, 140, 12, 28
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    n = len(activity.starts)
    label = "Progress over time"
    if n == 0:
        return _svg(
            60, label, ['<text x="8" y="30" class="muted">No decisions yet.</text>'], "chart-progress"
        )
    series = [
        Series("decisions", [0, *activity.cumulative(activity.decisions)], COLORS["decisions"]),
        Series("verified", [0, *activity.cumulative(activity.verified)], COLORS["verified"]),
        Series("rejected", [0, *activity.cumulative(activity.rejected)], COLORS["rejected"]),
    ]
    edges = [*activity.starts, activity.starts[-1] + timedelta(hours=activity.bin_hours)]
    top_value = _nice_max(max([activity.total_items, *(max(s.values) for s in series)]))

    def x(i: int) -> float:
        return left + plot_w * i / n

    def y(v: float) -> float:
        return top + plot_h * (1 - v / top_value)

    body = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#d0d7de"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#d0d7de"/>',
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" font-size="11">{top_value:g}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end" font-size="11">0</text>',
    ]
    if activity.total_items:
        goal_y = y(activity.total_items)
        body.append(
            f'<line x1="{left}" y1="{goal_y:.1f}" x2="{left + plot_w}" y2="{goal_y:.1f}" stroke="{COLORS["goal"]}" '
            f'stroke-dasharray="4 3"><title>{activity.total_items} items in all</title></line>'
        )
    unit = "%Y-%m-%d %H:00" if activity.bin_hours < 24 else "%Y-%m-%d"
    body.append(f'<text x="{left}" y="{height - 8}" font-size="11">{escape(edges[0].strftime(unit))}</text>')
    body.append(
        f'<text x="{left + plot_w}" y="{height - 8}" text-anchor="end" font-size="11">'
        f"{escape(edges[-1].strftime(unit))}</text>"
    )
    for row, s in enumerate(series):
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(s.values))
        body.append(f'<polyline points="{points}" fill="none" stroke="{s.color}" stroke-width="2"/>')
        for i, v in enumerate(s.values[1:], start=1):
            when = edges[i].strftime(unit)
            body.append(
                f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{s.color}" data-series="{s.name}" '
                f'data-value="{v:g}"><title>{escape(s.name)} by {escape(when)}: {v:g}</title></circle>'
            )
        legend_y = top + 14 + 18 * row
        body.append(
            f'<rect x="{WIDTH - right + 12}" y="{legend_y - 9}" width="10" height="10" fill="{s.color}"/>'
            f'<text x="{WIDTH - right + 28}" y="{legend_y}" font-size="12">{escape(s.name)}: {s.values[-1]:g}</text>'
        )
    return _svg(height, label, body, "chart-progress")


def throughput_chart(annotators: Sequence[AnnotatorStats]) -> Markup:
    """Decisions per annotator: all current ones, and those of the last 24 hours."""
    label = "Decisions per annotator"
    if not annotators:
        return _svg(60, label, ['<text x="8" y="30">No annotators yet.</text>'], "chart-throughput")
    row_h, left, right = 26, 120, 80
    height = row_h * len(annotators) + 24
    top_value = _nice_max(max(a.decided for a in annotators))
    plot_w = WIDTH - left - right
    body = []
    for i, a in enumerate(annotators):
        y0 = 6 + i * row_h
        total_w = plot_w * a.decided / top_value
        recent_w = plot_w * a.decided_last_24h / top_value
        median = "n/a" if a.median_minutes is None else f"{a.median_minutes:.1f} min"
        body.append(
            f'<text x="{left - 8}" y="{y0 + 14}" text-anchor="end" font-size="12">{escape(a.username)}</text>'
            f'<rect x="{left}" y="{y0}" width="{total_w:.1f}" height="18" fill="{COLORS["decisions"]}" '
            f'data-annotator="{escape(a.username)}" data-value="{a.decided}">'
            f"<title>{escape(a.username)}: {a.decided} decisions, {a.open} open, median {median}/item</title></rect>"
            f'<rect x="{left}" y="{y0 + 12}" width="{recent_w:.1f}" height="6" fill="{COLORS["verified"]}">'
            f"<title>{escape(a.username)}: {a.decided_last_24h} in the last 24 h</title></rect>"
            f'<text x="{left + total_w + 6:.1f}" y="{y0 + 14}" font-size="12">{a.decided} ({a.decided_last_24h} in 24 h)</text>'
        )
    return _svg(height, label, body, "chart-throughput")


def agreement_chart(by_task: dict[str, Agreement]) -> Markup:
    """Percent agreement per task as bars, with Cohen's kappa and Gwet's AC1 written beside them."""
    label = "Agreement per task"
    if not by_task:
        return _svg(
            60, label, ['<text x="8" y="30">No item has two judgements yet.</text>'], "chart-agreement"
        )
    row_h, left, right = 26, 170, 220
    height = row_h * len(by_task) + 24
    plot_w = WIDTH - left - right
    body = [
        f'<line x1="{left + plot_w}" y1="0" x2="{left + plot_w}" y2="{height - 18}" stroke="#d0d7de" '
        'stroke-dasharray="2 2"/>',
        f'<text x="{left + plot_w}" y="{height - 4}" text-anchor="middle" font-size="11">100%</text>',
    ]

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    for i, (task, a) in enumerate(by_task.items()):
        y0 = 6 + i * row_h
        percent = a.percent or 0.0
        width = plot_w * percent / 100.0
        color = COLORS["verified"] if percent >= 80 else ("#bf8700" if percent >= 60 else COLORS["rejected"])
        body.append(
            f'<text x="{left - 8}" y="{y0 + 14}" text-anchor="end" font-size="12">{escape(task)}</text>'
            f'<rect x="{left}" y="{y0}" width="{width:.1f}" height="18" fill="{color}" data-task="{escape(task)}" '
            f'data-value="{percent:.1f}"><title>{escape(task)}: {percent:.1f}% agreement over {a.n} items, '
            f"kappa {fmt(a.kappa)}, AC1 {fmt(a.ac1)}</title></rect>"
            f'<text x="{left + plot_w + 8}" y="{y0 + 14}" font-size="12">{percent:.0f}% · κ {fmt(a.kappa)} · '
            f"AC1 {fmt(a.ac1)} · n={a.n}</text>"
        )
    return _svg(height, label, body, "chart-agreement")
