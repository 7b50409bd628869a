"""Terminal output that survives narrow terminals and long paths.

Messages name files as `path:line` so that people can grep logs and paste paths into an editor;
rich would otherwise hard-wrap them at the terminal width (a newline in the middle of a path) and
colour numbers inside them. Every console the CLI and the runner print messages on comes from
`message_console`: lines are never wrapped (the terminal folds them visually, the bytes stay one
line), nothing is highlighted unless the markup asks for it, and no `:name:` is read as an emoji
code (`openai:m:...` in a message stays text).

Tables are the one thing that should fit the terminal when they can; `print_table` prints a
table at the terminal's width when its natural width fits there, and at its natural width
otherwise, so a cell holding a task name or a path is never broken in two.
"""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

#: Widest a table is ever laid out (a guard against a pathological cell, not a real limit).
_MAX_TABLE_WIDTH = 4000


def message_console(*, stderr: bool = False) -> Console:
    """A console whose printed lines are never hard-wrapped, auto-highlighted or emoji-coded."""
    return Console(stderr=stderr, soft_wrap=True, highlight=False, emoji=False)


def print_table(console: Console, table: Table) -> None:
    """Print `table` without breaking any cell: at the terminal's width if it fits, else wider."""
    natural = Measurement.get(console, console.options.update_width(_MAX_TABLE_WIDTH), table).maximum
    width = console.width
    if natural <= width:
        console.print(table, soft_wrap=False)
        return
    console.width = natural
    try:
        console.print(table, soft_wrap=False, crop=False)
    finally:
        console.width = width
