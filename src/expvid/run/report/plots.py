"""Plots for the HTML report (matplotlib, rendered to inline SVG so the page is self-contained)."""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from expvid.run.report.table import Column, LoadedRun, Row


def _svg(figure: plt.Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def task_bars(columns: Sequence[Column], rows: Sequence[Row], references: Sequence[Row]) -> str:
    """Grouped bars per task (one bar per run) with 95% CI whiskers; published rows as markers."""
    labels = [column.label for column in columns]
    x = np.arange(len(columns))
    width = 0.8 / max(1, len(rows))
    figure, axis = plt.subplots(figsize=(max(7.0, 0.9 * len(columns) + 2), 3.8))
    for position, row in enumerate(rows):
        values = np.array([np.nan if row.values.get(c.key) is None else row.values[c.key] for c in columns])
        low = [row.ci.get(c.key) for c in columns]
        errors = np.array(
            [
                [0.0, 0.0] if ci is None or np.isnan(v) else [max(0.0, v - ci[0]), max(0.0, ci[1] - v)]
                for v, ci in zip(values, low, strict=True)
            ]
        ).T
        offset = (position - (len(rows) - 1) / 2) * width
        axis.bar(x + offset, np.nan_to_num(values), width, yerr=errors, capsize=2, label=row.label)
    markers = "osD^v<>"
    for index, ref in enumerate(references[:7]):
        published = [ref.values.get(c.key) for c in columns]
        axis.scatter(
            x,
            [np.nan if v is None else v for v in published],
            marker=markers[index],
            color="black",
            s=14,
            zorder=5,
            label=ref.label,
        )
    axis.set_xticks(x, labels, rotation=0)
    axis.set_ylim(0, 100)
    axis.set_ylabel("score (0-100)")
    axis.grid(axis="y", alpha=0.3)
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(figure)


def discipline_bars(runs: Sequence[LoadedRun], level_names: Sequence[str]) -> str | None:
    """Level averages per discipline, one panel per level, one bar per run, with CIs."""
    disciplines = sorted({d for run in runs for d in run.scores.disciplines})
    if not disciplines:
        return None
    figure, axes = plt.subplots(
        1, len(level_names), figsize=(4.2 * len(level_names), 3.6), sharey=True, squeeze=False
    )
    x = np.arange(len(disciplines))
    width = 0.8 / max(1, len(runs))
    for axis, level in zip(axes[0], level_names, strict=True):
        for position, run in enumerate(runs):
            values, errors = [], []
            for name in disciplines:
                group = run.scores.disciplines.get(name)
                entry = group.levels.get(level) if group else None
                value = np.nan if entry is None else entry.score
                values.append(value)
                ci = None if entry is None else entry.ci95
                errors.append(
                    [0.0, 0.0] if ci is None else [max(0.0, value - ci[0]), max(0.0, ci[1] - value)]
                )
            offset = (position - (len(runs) - 1) / 2) * width
            axis.bar(
                x + offset,
                np.nan_to_num(values),
                width,
                yerr=np.array(errors).T,
                capsize=2,
                label=run.label,
            )
        axis.set_title(level)
        axis.set_xticks(x, disciplines, rotation=30, ha="right", fontsize=8)
        axis.set_ylim(0, 100)
        axis.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("score (0-100)")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(figure)
