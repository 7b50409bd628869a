"""A Typer group whose commands are imported only when one of them runs.

Why: users run `expvid` many times a day, and each command module pulls in what its stage needs
(pydantic models, numpy, PyAV, the scoring and report code, and from there on demand the model
backends, matplotlib, the web stack). Importing all of them to print `expvid --help` or to run
`expvid frames` took most of a second. Here the top-level app knows each command only by name,
where it lives ("module:attribute") and its one-line help; `expvid --help` lists those without
importing anything, and `expvid NAME ...` imports exactly NAME's module.

A command is a function (registered like `app.command(name)(function)`) or a `typer.Typer`
sub-app (like `app.add_typer(sub_app, name=name)`). `tests/cli/test_startup.py` checks that the
one-line help written here matches the command's own docstring, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # Typer carries its own copy of Click; its groups and commands use those types
    from typer._click import Command, Context, HelpFormatter


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives ("package.module:attribute") and its one-line help."""

    target: str
    help: str

    def load(self) -> Any:
        module_name, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module_name), attribute)


def build_command(name: str, target: Any) -> Command:
    """The Click command Typer would build for `target` registered under `name`."""
    command: Command
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        # A command may name its own command class (`expvid.cli.suite_flags.SuiteCommand` for `-S`).
        single.command(name, cls=getattr(target, "command_class", None))(target)
        command = typer.main.get_command(single)
    command.name = name
    _plain_help(command)
    return command


def _plain_help(command: Command) -> None:
    """Help in Click's plain layout, as the top-level app prints it.

    Typer's rich layout imports `typer.rich_utils` (rich's markdown renderer among others: about
    0.14 s, half of `expvid frames --help`) and draws panels hard-wrapped at the terminal width.
    """
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)


class LazyGroup(TyperGroup):
    """A `TyperGroup` that also holds commands by reference, loaded on first use.

    Subclass it with a `lazy_commands` mapping (see `lazy_group`): Typer instantiates the group
    class itself, so the table has to live on the class.
    """

    lazy_commands: Mapping[str, LazyCommand] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False  # True while help is being formatted: list, do not import

    def list_commands(self, ctx: Context) -> list[str]:
        return [
            *super().list_commands(ctx),
            *(name for name in self.lazy_commands if name not in self.commands),
        ]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        lazy = self.lazy_commands.get(cmd_name)
        if lazy is None:
            return None
        if self._listing:
            return TyperCommand(cmd_name, help=lazy.help, short_help=lazy.help)
        command = build_command(cmd_name, lazy.load())
        self.commands[cmd_name] = command
        return command

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        """As Typer's, including "Did you mean ...?", which Typer draws from loaded commands only."""
        name = args[0] if args else None
        if self.suggest_commands and name and not name.startswith("-"):
            known = self.list_commands(ctx)
            matches = get_close_matches(name, known)
            if name not in known and matches:
                ctx.fail(f"No such command {name!r}. Did you mean {', '.join(repr(m) for m in matches)}?")
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_group(commands: Mapping[str, LazyCommand]) -> type[LazyGroup]:
    """A `LazyGroup` class holding `commands`, to pass as `typer.Typer(cls=...)`."""
    return type("ExpvidCommands", (LazyGroup,), {"lazy_commands": dict(commands)})
