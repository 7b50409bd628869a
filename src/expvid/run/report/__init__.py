"""Reports of one or many runs in the paper's table layout: Markdown, CSV and self-contained HTML."""

from expvid.run.report.html import to_html
from expvid.run.report.table import Table, build_table, load_runs
from expvid.run.report.text_formats import to_csv, to_markdown

__all__ = ["Table", "build_table", "load_runs", "to_csv", "to_html", "to_markdown"]
