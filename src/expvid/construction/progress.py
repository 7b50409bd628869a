"""Progress of a build, stage by stage, without tying the pipeline to a terminal.

The pipeline reports units of work per phase (`transcription`, `curation`, `level1`, `level2`, `level3`, `clips`,
`blind_audit`): `add` when it learns how many there are (a phase's total grows as experiments are
read: Level-1 units are only known once an experiment's sentences are cut), `advance` as they finish.
The command line draws these as progress bars with rate and ETA (`expvid.cli.build`); Python callers
get nothing unless they pass a sink. `PhaseClock` measures each phase's wall time (first start to last
end; phases of different experiments overlap, so the times do not add up to the build's).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

#: Phases in the order they are shown.
PHASES = ("transcription", "curation", "level1", "level2", "level3", "clips", "blind_audit")


class ProgressSink(Protocol):
    def add(self, phase: str, total: int) -> None:
        """`total` more units of `phase` are expected."""

    def advance(self, phase: str, done: int = 1) -> None:
        """`done` units of `phase` finished (successfully or not)."""


class _Silent:
    def add(self, phase: str, total: int) -> None:
        return None

    def advance(self, phase: str, done: int = 1) -> None:
        return None


NO_PROGRESS: ProgressSink = _Silent()


class PhaseClock:
    """Wall time per phase: from the first unit started to the last one finished."""

    def __init__(self) -> None:
        self.origin = time.monotonic()
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}

    def start(self, phase: str) -> None:
        self.first.setdefault(phase, time.monotonic())

    def stop(self, phase: str) -> None:
        self.last[phase] = time.monotonic()

    @contextmanager
    def running(self, phase: str) -> Iterator[None]:
        self.start(phase)
        try:
            yield
        finally:
            self.stop(phase)

    def spans(self) -> dict[str, tuple[float, float]]:
        """Per phase: (first start, last end) in seconds since the clock was made (the run's start):
        shows which phases overlap, e.g. the blind audit running while other stages still draft."""
        return {
            phase: (round(start - self.origin, 3), round(self.last.get(phase, start) - self.origin, 3))
            for phase, start in self.first.items()
        }

    def seconds(self) -> dict[str, float]:
        return {
            phase: round(self.last.get(phase, start) - start, 3)
            for phase, start in sorted(self.first.items(), key=lambda kv: kv[1])
        }
