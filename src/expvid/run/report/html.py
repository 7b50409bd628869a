"""A self-contained HTML report: the paper-layout table, plots with CIs, notes and run settings."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import UTC, datetime

from expvid.run.report.caveats import unfinished_reason
from expvid.run.report.table import LoadedRun, Table
from expvid.run.report.text_formats import run_notes

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem;color:#222;max-width:1400px}
table{border-collapse:collapse;font-size:13px;margin:1rem 0}
th,td{border:1px solid #ccc;padding:4px 7px;text-align:right}
th{background:#f3f3f3} td.model{text-align:left;font-weight:600} tr.ref td{color:#666;background:#fafafa}
tr.ref td.model{font-weight:400;font-style:italic} td.avg{background:#f7f9ff;font-weight:600}
.ci{display:block;font-size:10px;color:#888} .note{background:#fff8e1;border-left:4px solid #f0b400;padding:6px 10px}
code{background:#f3f3f3;padding:1px 4px} details{margin:0.5rem 0}
"""


def _fmt(value: float | None, fmt: str = ".1f") -> str:
    return "–" if value is None else format(value, fmt)


def _table_html(table: Table) -> str:
    parts = ["<table>", "<tr><th rowspan=2>Model</th>"]
    parts += [f"<th colspan={len(g.columns)}>{html.escape(g.name)}</th>" for g in table.groups]
    parts.append("</tr><tr>")
    parts += [f"<th>{html.escape(c.label)}</th>" for g in table.groups for c in g.columns]
    parts.append("</tr>")
    for row in table.rows:
        parts.append(f"<tr class={'ref' if row.reference else 'run'}>")
        title = f" title='{html.escape(row.spec)}'" if row.spec and row.spec not in row.label else ""
        parts.append(f"<td class=model{title}>{html.escape(row.label)}</td>")
        for column in table.columns:
            value = row.values.get(column.key)
            ci = row.ci.get(column.key)
            extra = f"<span class=ci>[{ci[0]:.1f}, {ci[1]:.1f}]</span>" if ci else ""
            n = row.counts.get(column.key)
            title = f" title='n={n}'" if n is not None else ""
            css = " class=avg" if column.kind == "level" else ""
            parts.append(f"<td{css}{title}>{_fmt(value, column.fmt)}{extra}</td>")
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


def _run_details(run: LoadedRun) -> str:
    manifest = run.rundir.read_manifest() if run.rundir.exists() else None
    summary = run.scores.run
    items = [
        f"<li>model: <code>{html.escape(summary.model)}</code></li>",
        f"<li>items scored: {summary.n_predictions} of {summary.n_items}"
        + ("" if summary.complete else " <b>(incomplete)</b>")
        + "</li>",
    ]
    if summary.n_records is not None:
        failed = ", ".join(f"{kind} {n}" for kind, n in summary.failed_by_kind.items()) or "none"
        items.append(
            f"<li>records in the run's tasks: {summary.n_records}; invalid {summary.n_invalid}; "
            f"failed {summary.n_failed} ({html.escape(failed)}); cut by the token limit {summary.n_truncated}</li>"
        )
    if summary.partial:
        items.append(f"<li><b>partial run</b>: {html.escape(summary.partial)}</li>")
    unfinished = unfinished_reason(summary)
    if unfinished:
        items.append(f"<li><b>partial run, not finished</b>: {html.escape(unfinished)}</li>")
    if summary.judge is not None:
        kind = "offline" if summary.judge.offline else "LLM"
        model = html.escape(summary.judge.model or "")
        items.append(f"<li>judge: {kind} — <code>{html.escape(summary.judge.name)}</code> {model}</li>")
    if manifest is not None:
        generation = manifest.config.get("generation", {})
        items.append(f"<li>generation: {html.escape(str(generation))}</li>")
        for task, sampler in manifest.samplers.items():
            items.append(
                f"<li>frames for <code>{html.escape(task)}</code>: "
                f"{html.escape(sampler.model_dump_json(exclude_none=True))}</li>"
            )
        items.append(
            f"<li>dataset fingerprint: <code>{html.escape(manifest.dataset_fingerprint or '')}</code></li>"
        )
        versions = ", ".join(f"{k} {v}" for k, v in manifest.versions.items())
        items.append(f"<li>versions: {html.escape(versions)}</li>")
    return f"<details><summary>{html.escape(run.label)}</summary><ul>{''.join(items)}</ul></details>"


def to_html(table: Table, runs: Sequence[LoadedRun], *, title: str) -> str:
    from expvid.run.report.plots import discipline_bars, task_bars  # matplotlib: only when drawing

    run_rows = [row for row in table.rows if not row.reference]
    reference_rows = [row for row in table.rows if row.reference]
    # Bars for every 0-100 column but the averages (a suite's cells included; 0-1 metrics are not).
    task_columns = [c for c in table.columns if c.kind in ("task", "cell") and c.fmt in (".1f", ".2f")]
    level_names = [c.key for c in table.columns if c.kind == "level"]
    notes = run_notes(table)
    body = [f"<h1>{html.escape(title)}</h1>"]
    body += [f"<p class=note>{html.escape(note)}</p>" for note in notes]
    body.append(_table_html(table))
    body.append("<p>Scores are 0-100; brackets are 95% cluster-bootstrap intervals (resampling videos).")
    body.append(" Unparseable answers and failed requests score 0 and are counted in scores.json.</p>")
    if task_columns:
        body.append("<h2>Per task</h2>")
        body.append(task_bars(task_columns, run_rows, reference_rows[:5]))
    per_discipline = discipline_bars(runs, level_names) if level_names else None
    if per_discipline:
        body.append("<h2>Per discipline</h2>")
        body.append(per_discipline)
    body.append("<h2>Runs</h2>")
    body += [_run_details(run) for run in runs]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    body.append(f"<p style='color:#888;font-size:11px'>generated by expvid report, {stamp}</p>")
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
