"""Progress bars (rich) for the long phases: rate and ETA, and running failure counts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second over the recent window."""

    def render(self, task: Task) -> Text:
        speed = task.speed
        return Text("  -  it/s" if not speed else f"{speed:5.1f} it/s", style="magenta")


@dataclass
class PhaseCounter:
    """Counts outcomes of a phase for the bar's label and the final summary."""

    done: int = 0
    failed: int = 0
    cached: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    def label(self) -> str:
        parts = [f"{self.failed} failed"] if self.failed else []
        if self.cached:
            parts.append(f"{self.cached} cached")
        return ", ".join(parts)


class PhaseBar:
    def __init__(self, progress: Progress | None, task: TaskID | None, name: str) -> None:
        self.progress = progress
        self.task = task
        self.name = name
        self.counter = PhaseCounter()

    def advance(self, *, failed: bool = False, cached: bool = False) -> None:
        self.counter.done += 1
        self.counter.failed += int(failed)
        self.counter.cached += int(cached)
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, info=self.counter.label())


class RunProgress:
    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress

    def phase(self, name: str, total: int) -> PhaseBar:
        if self.progress is None:
            return PhaseBar(None, None, name)
        task = self.progress.add_task(name, total=total, info="")
        return PhaseBar(self.progress, task, name)


@contextmanager
def run_progress(console: Console | None, enabled: bool) -> Iterator[RunProgress]:
    if not enabled:
        yield RunProgress(None)
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn("[cyan]{task.fields[info]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    with progress:
        yield RunProgress(progress)
