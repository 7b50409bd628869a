"""Jinja2 rendering of the viewer's page: the shell, and the overview (server-rendered, autoescaped).

The item list and item pages are drawn in the browser from JSON (`static/view.js`), the same code
for the served viewer (which fetches it) and the static export (which embeds it).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from expvid.view.overview import build_overview
from expvid.view.rows import build_rows
from expvid.view.session import ViewSession

HERE = Path(__file__).resolve().parent
TEMPLATES_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"


def _number(value: Any, fmt: str = ".1f") -> str:
    return "–" if value is None else format(value, fmt)


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["number"] = _number
    env.filters["pretty"] = _pretty
    env.tests["scalar"] = _scalar
    env.tests["mapping"] = lambda value: isinstance(value, dict)
    return env


def overview_context(session: ViewSession) -> dict[str, Any]:
    rows = session.memo("rows", lambda: build_rows(session))
    return session.memo("overview", lambda: build_overview(session, rows))


def render_overview(session: ViewSession) -> str:
    return environment().get_template("overview.html").render(o=overview_context(session))


def render_page(session: ViewSession, *, mode: str, inline: dict[str, str] | None = None) -> str:
    """The whole page. `inline` (export): {"css", "js", "bundle"} to embed instead of linking."""
    title = " vs ".join(run.label for run in session.runs) + " — expvid view"
    return (
        environment()
        .get_template("page.html")
        .render(
            title=title,
            mode=mode,
            runs=[{"key": run.key, "label": run.label} for run in session.runs],
            version=session.version,
            overview=render_overview(session),
            inline=inline,
        )
    )


def static_text(name: str) -> str:
    return (STATIC_DIR / name).read_text(encoding="utf-8")
