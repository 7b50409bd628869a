"""Progress bars of `expvid build` (one per stage: count, rate, ETA), shared by every recipe."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console


class _RichProgress:
    """Progress bars per build stage (count, rate, ETA) on stderr; a stage's bar appears with its first unit."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}

    def _task(self, phase: str) -> Any:
        if phase not in self.tasks:
            self.tasks[phase] = self.progress.add_task(phase, total=0)
        return self.tasks[phase]

    def add(self, phase: str, total: int) -> None:
        task = self._task(phase)
        current = self.progress.tasks[self.tasks[phase]].total or 0
        self.progress.update(task, total=current + total)

    def advance(self, phase: str, done: int = 1) -> None:
        self.progress.advance(self._task(phase), done)


@contextmanager
def build_progress(console: Console, *, enabled: bool) -> Iterator[Any]:
    """Rich progress bars (stage, bar, done/total, units per second, elapsed, ETA), or nothing."""
    from expvid.construction.progress import NO_PROGRESS

    if not enabled:
        yield NO_PROGRESS
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("-/s" if speed is None else f"{speed:.1f}/s")

    columns = (
        TextColumn("{task.description:<11}"),
        BarColumn(bar_width=None),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, refresh_per_second=4) as progress:
        yield _RichProgress(progress)
