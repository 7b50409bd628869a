"""What `expvid suites` and `expvid recipes` share: the installed plug-ins, one plain line each (a
narrow terminal wraps lines without breaking a table), and one plug-in described in full."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import typer


def plugin_title(cls: Any) -> str:
    """A plug-in class's one-line title: its `title`, else the first line of its docstring."""
    return str(getattr(cls, "title", "") or (cls.__doc__ or "").strip().splitlines()[0])


def echo_listing(
    names: Iterable[str],
    load: Callable[[str], Any],
    errors: type[Exception],
    line: Callable[[str, Any], str],
) -> None:
    """`line(name, cls)` for each plug-in `load` finds; one that fails to load with `errors` says why."""
    for name in names:
        try:
            cls = load(name)
        except errors as error:
            typer.echo(f"{name}  (cannot be loaded: {error})")
            continue
        typer.echo(line(name, cls))


def echo_description(describe: Callable[[str], str], name: str, errors: type[Exception]) -> None:
    """The text `describe(name)`; an unknown name (`errors`) is one line on stderr and exit 2."""
    try:
        text = describe(name)
    except errors as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(text)
