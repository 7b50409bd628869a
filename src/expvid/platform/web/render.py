"""Jinja2 templates: one environment, autoescaped, with the few filters the pages need."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import BaseLoader, ChoiceLoader, Environment, FileSystemLoader
from markupsafe import Markup

from expvid.platform.config import InputLimits

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
STATIC_DIR = Path(__file__).resolve().parent / "static"


class _RecipeTemplates(BaseLoader):
    """The templates the installed recipes ship for their pages (`Recipe.review_templates`), found
    through the recipe registry on first use; the platform's own come first."""

    def __init__(self) -> None:
        self._loader: ChoiceLoader | None = None

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        if self._loader is None:
            from expvid.platform.services.recipe_hooks import template_dirs

            self._loader = ChoiceLoader([FileSystemLoader(str(folder)) for folder in template_dirs()])
        return self._loader.get_source(environment, template)


templates = Jinja2Templates(
    env=Environment(
        loader=ChoiceLoader([FileSystemLoader(str(TEMPLATES_DIR)), _RecipeTemplates()]), autoescape=True
    )
)


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def render_markdown_lite(text: str | None) -> Markup:
    """Headings and paragraphs of a paper's Markdown, everything else shown as text (escaped).

    Why not a Markdown library: papers come from the candidate directory; treating them as text with
    a little structure keeps any embedded HTML inert without a sanitiser.
    """
    if not text:
        return Markup("")
    parts: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            parts.append("<p>" + "<br>".join(html.escape(line) for line in paragraph) + "</p>")
            paragraph.clear()

    for line in text.splitlines():
        match = _HEADING.match(line.strip())
        if match:
            flush()
            level = min(6, len(match.group(1)) + 2)
            parts.append(f"<h{level}>{html.escape(match.group(2))}</h{level}>")
        elif not line.strip():
            flush()
        else:
            paragraph.append(line.strip())
    flush()
    return Markup("\n".join(parts))


templates.env.filters["when"] = _when
templates.env.filters["number"] = _number
templates.env.filters["as_json"] = _as_json
templates.env.filters["paper"] = render_markdown_lite


def page(
    request: Request, name: str, context: dict[str, Any] | None = None, status_code: int = 200
) -> HTMLResponse:
    """Render a page; the signed-in viewer (if any) and its CSRF token are always in the context."""
    viewer = getattr(request.state, "viewer", None)
    settings = getattr(request.app.state, "settings", None)
    full = {
        "viewer": viewer,
        "csrf_token": viewer.csrf_token if viewer else None,
        # Field limits for the forms' maxlength (the server checks the same numbers).
        "limits": settings.limits if settings is not None else InputLimits(),
        **(context or {}),
    }
    return templates.TemplateResponse(request, name, full, status_code=status_code)
