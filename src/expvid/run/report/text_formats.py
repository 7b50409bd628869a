"""The results table as Markdown (for READMEs and issues) and CSV (for spreadsheets)."""

from __future__ import annotations

import csv
import io

from expvid.run.report.table import Table


def _cell(value: float | None, fmt: str = ".1f") -> str:
    return "–" if value is None else format(value, fmt)


def to_markdown(table: Table, *, title: str | None = None) -> str:
    columns = table.columns
    lines = []
    if title:
        lines += [f"### {title}", ""]
    # Markdown has no column spans: the group name goes into each group's average column header.
    header = ["Model"]
    for group in table.groups:
        for column in group.columns:
            header.append(f"{column.label} ({group.name})" if column.kind == "level" else column.label)
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * len(columns)) + "|")
    for row in table.rows:
        label = f"_{row.label}_" if row.reference else f"**{row.label}**"
        cells = [_cell(row.values.get(column.key), column.fmt) for column in columns]
        lines.append("| " + " | ".join([label, *cells]) + " |")
    notes = [f"{label}: model `{spec}`" for label, spec in table.models.items()] + run_notes(table)
    if notes:
        lines.append("")
        lines.extend(f"- {text}" for text in notes)
    return "\n".join(lines) + "\n"


def run_notes(table: Table) -> list[str]:
    """Caveats every rendering must show: run notes (offline judge, incomplete run), then one line
    per kind of problem behind each run's numbers (partial run, failures, invalid, truncated, ...)."""
    notes = list(table.notes)
    notes += [note for row in table.rows if not row.reference for note in row.notes]
    notes += [line for row in table.rows if not row.reference for line in row.caveats]
    if any(row.partial for row in table.rows) and any(row.reference for row in table.rows):
        notes.append(
            "Rows marked (partial) cover only part of the dataset; the published rows cover all of it."
        )
    return list(dict.fromkeys(notes))


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    header = ["model", "model spec", "reference", "partial", "cost_usd"]
    for group in table.groups:
        for column in group.columns:
            name = f"{group.name}/{column.label}"
            header += [name, f"{name} ci_low", f"{name} ci_high", f"{name} n"]
    header += ["dataset fingerprint", "table notes", "frames and resolution"]
    table_notes = " | ".join(table.notes)
    writer.writerow(header)
    for row in table.rows:
        cost = "" if row.cost_usd is None else f"{row.cost_usd:.6f}"
        cells: list[object] = [row.label, row.spec or "", int(row.reference), row.partial or "", cost]
        for column in table.columns:
            value = row.values.get(column.key)
            ci = row.ci.get(column.key)
            cells += [
                "" if value is None else f"{value:.4f}",
                "" if ci is None else f"{ci[0]:.4f}",
                "" if ci is None else f"{ci[1]:.4f}",
                row.counts.get(column.key, ""),
            ]
        cells += [row.dataset or "", "" if row.reference else table_notes, row.settings or ""]
        writer.writerow(cells)
    return buffer.getvalue()
