"""One place that turns expected failures into a one-line message and a non-zero exit code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from expvid.schema import DataError

_console = Console(stderr=True)


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Data, configuration and media problems are the user's to fix: show them, not a traceback."""
    from expvid.media.errors import MediaError
    from expvid.models.types import BackendConfigError

    try:
        yield
    except (DataError, BackendConfigError, MediaError, FileNotFoundError) as error:
        _console.print(f"[red]error:[/] {error}", highlight=False)
        raise typer.Exit(code=2) from None
