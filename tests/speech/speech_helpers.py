"""Shared by the speech tests: what the narrated-video fixture returns (a unique module name, not
`conftest`, so test modules can import it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NarratedVideo:
    path: Path
    cues: tuple[tuple[float, float, str], ...]
    seconds: float
