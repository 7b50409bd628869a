"""Another harness's per-item scores beside expvid's, task by task: what `expvid score --from inspect`
and `--from lmms-eval` both count once expvid has scored the other harness's answers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def item_scores(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The lines of a scored run's `item_scores.jsonl`, by item id."""
    lines = (run_dir / "item_scores.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["item_id"]: record for record in map(json.loads, lines)}


def expvid_value(mine: dict[str, Any] | None) -> float | None:
    """expvid's score of an item on 0-1 (earned / possible), or None when it has none."""
    return mine["earned"] / mine["possible"] if mine and mine["possible"] else None


def agreement(theirs: float | None, mine: float | None) -> bool | None:
    """Whether two 0-1 scores of an item are the same; None when either is missing."""
    return None if theirs is None or mine is None else abs(theirs - mine) < 1e-9


@dataclass
class TaskAgreement:
    """One task's items: the other harness's per-item values, expvid's earned and possible points,
    and the comparison rows where the two disagree."""

    n: int = 0
    agree: int = 0
    theirs_sum: float = 0.0
    theirs_n: int = 0
    expvid_earned: float = 0.0
    expvid_possible: float = 0.0
    disagree: list[dict[str, Any]] = field(default_factory=list)

    @property
    def theirs_mean(self) -> float | None:
        """The mean of the other harness's per-item values (0-100)."""
        return 100 * self.theirs_sum / self.theirs_n if self.theirs_n else None

    @property
    def expvid_score(self) -> float | None:
        return 100 * self.expvid_earned / self.expvid_possible if self.expvid_possible else None

    def add(self, theirs: float | None, mine: dict[str, Any] | None, row: dict[str, Any]) -> None:
        """Count one item; `row` is its comparison line, with `agree` set by `agreement`."""
        self.n += 1
        if theirs is not None:
            self.theirs_sum += theirs
            self.theirs_n += 1
        if mine is not None:
            self.expvid_earned += mine["earned"]
            self.expvid_possible += mine["possible"]
        if row["agree"]:
            self.agree += 1
        elif row["agree"] is False:
            self.disagree.append(row)
