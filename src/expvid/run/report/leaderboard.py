"""A static leaderboard page: one sortable table per suite and setting, with confidence intervals.

Self-contained HTML (inline CSS and a few lines of JS, no network): click a column header to sort
by it (again to reverse); every score shows its 95% cluster-bootstrap interval under it; the
paper's rows are kept, in italics, for comparison; a partial cell keeps its label ("(incomplete)",
"(stopped at budget)", "(waiting for batches)") in its row; each model links to its cell's viewer
page (`expvid view --export`), and the cost of each cell is shown beside it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from expvid.run.report.table import Row, Table

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem;color:#222;max-width:1500px}
table{border-collapse:collapse;font-size:13px;margin:0.5rem 0 2rem}
th,td{border:1px solid #ccc;padding:4px 7px;text-align:right}
th{background:#f3f3f3;cursor:pointer;user-select:none} th.sorted-desc::after{content:" ▼"}
th.sorted-asc::after{content:" ▲"} td.model{text-align:left;font-weight:600} td.cost{color:#555}
tr.ref td{color:#666;background:#fafafa} tr.ref td.model{font-weight:400;font-style:italic}
td.avg{background:#f7f9ff;font-weight:600} .ci{display:block;font-size:10px;color:#888}
.status{font-size:11px;color:#a35} .note{font-size:12px;color:#555;margin:0.2rem 0}
"""

_SCRIPT = """
document.querySelectorAll('table.board').forEach(function (table) {
  table.querySelectorAll('th[data-col]').forEach(function (th) {
    th.addEventListener('click', function () {
      var col = +th.dataset.col, body = table.tBodies[0];
      var desc = !th.classList.contains('sorted-desc');
      table.querySelectorAll('th').forEach(function (h) { h.classList.remove('sorted-desc', 'sorted-asc'); });
      th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
        var nx = x === '' ? NaN : +x, ny = y === '' ? NaN : +y;
        if (isNaN(nx) && isNaN(ny)) { return (desc ? -1 : 1) * (x || '').localeCompare(y || ''); }
        if (isNaN(nx)) { return 1; }
        if (isNaN(ny)) { return -1; }
        return desc ? ny - nx : nx - ny;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


@dataclass
class BoardSection:
    """One table of the leaderboard (a suite under one setting)."""

    title: str
    table: Table
    #: Row label -> relative link to the cell's viewer page.
    links: dict[str, str] = field(default_factory=dict)
    #: Row label -> USD the cell spent (None: unknown).
    costs: dict[str, float | None] = field(default_factory=dict)
    #: Lines under the table: cells without scores, caveats.
    notes: list[str] = field(default_factory=list)


def _cell(value: float | None, ci: tuple[float, float] | None, fmt: str, level: bool) -> str:
    css = " class=avg" if level else ""
    if value is None:
        return f"<td{css} data-v=''>–</td>"
    interval = f"<span class=ci>[{ci[0]:.1f}, {ci[1]:.1f}]</span>" if ci else ""
    return f"<td{css} data-v='{value:.6f}'>{format(value, fmt)}{interval}</td>"


def _row(row: Row, section: BoardSection, table: Table) -> str:
    label = html.escape(row.label)
    link = section.links.get(row.label)
    name = f"<a href='{html.escape(link)}'>{label}</a>" if link else label
    cost = section.costs.get(row.label)
    cost_cell = (
        "<td class=cost data-v=''>–</td>"
        if cost is None
        else f"<td class=cost data-v='{cost:.6f}'>${cost:.2f}</td>"
    )
    cells = [_cell(row.values.get(c.key), row.ci.get(c.key), c.fmt, c.kind == "level") for c in table.columns]
    css = "ref" if row.reference else "run"
    title = f" title='{html.escape(row.spec)}'" if row.spec and row.spec not in row.label else ""
    return (
        f"<tr class={css}><td class=model data-v='{label}'{title}>{name}</td>{''.join(cells)}{cost_cell}</tr>"
    )


def _section(section: BoardSection) -> str:
    table = section.table
    header = ["<th data-col=0>Model</th>"]
    index = 1
    for group in table.groups:
        for column in group.columns:
            label = f"{column.label} ({group.name})" if column.kind == "level" else column.label
            header.append(f"<th data-col={index}>{html.escape(label)}</th>")
            index += 1
    header.append(f"<th data-col={index}>Cost (USD)</th>")
    rows = "".join(_row(row, section, table) for row in table.rows)
    caveats = [line for row in table.rows if not row.reference for line in row.caveats]
    notes = "".join(f"<p class=note>{html.escape(note)}</p>" for note in [*section.notes, *caveats])
    return (
        f"<h2>{html.escape(section.title)}</h2><table class=board><thead><tr>{''.join(header)}</tr></thead>"
        f"<tbody>{rows}</tbody></table>{notes}"
    )


def leaderboard_html(sections: Sequence[BoardSection], *, title: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = [f"<h1>{html.escape(title)}</h1>"]
    body.append(
        "<p>Scores are 0-100 with 95% cluster-bootstrap intervals (resampling videos); click a header to sort. "
        "Failed and unparseable answers score 0; rows marked (partial), (incomplete), (stopped at budget) "
        "or (waiting for batches) do not cover the whole benchmark. Italic rows are the paper's.</p>"
    )
    body += [_section(section) for section in sections]
    body.append(f"<p class=note>generated by expvid eval-set, {stamp}</p>")
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "\n".join(body)
        + f"<script>{_SCRIPT}</script></body></html>\n"
    )
