"""What a suite's sample generator reports (`expvid sample make DIR --suite NAME`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SampleReport:
    """Where a sample was written, how long it took, and what it holds."""

    root: Path
    seconds: float
    #: Items per task, when the generator counts them (printed as a table).
    counts: dict[str, int] = field(default_factory=dict)
    #: One line about the rest ("12 questions on 4 videos").
    what: str = ""
