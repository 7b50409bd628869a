"""`scores.json`: the shape of a scored run, as pydantic models.

```
{"tasks":  {stem: {score, n, n_unparseable, n_failed, n_judge_failed, ci95, ...}},
 "levels": {"L1": {...}, "L2": {...}, "L3": {...}},
 "disciplines": {discipline: {"tasks": {...}, "levels": {...}}},
 "settings": {...}}
```
Scores are on a 0-100 scale. `ci95` is a cluster-bootstrap percentile interval (by video).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from expvid.schema import TaskScore
from expvid.schema.records import CountedScore
from expvid.scoring.levels import LevelRule

#: How items whose judge failed are scored; written into every report so nobody has to guess.
JUDGE_FAILURE_POLICY = (
    "items whose judge failed score 0 in the headline and are counted in n_judge_failed; "
    "score_judged_only gives the score over the items the judge did decide"
)


class TaskSummary(TaskScore):
    """A task's score with the totals behind it (units are blanks for level 3, items otherwise)."""

    earned: float = 0.0
    possible: float = 0.0
    #: Score over items whose judge answered; only set when some judge calls failed.
    score_judged_only: float | None = None


class LevelSummary(CountedScore):
    ci95: tuple[float, float] | None = None
    rule: LevelRule
    tasks: list[str]
    missing_tasks: list[str] = Field(default_factory=list)


class ScoreGroup(BaseModel):
    tasks: dict[str, TaskSummary] = Field(default_factory=dict)
    levels: dict[str, LevelSummary] = Field(default_factory=dict)


class ReportSettings(BaseModel):
    n_bootstrap: int
    seed: int
    confidence: float = 0.95
    cluster: str = "video_id (an item without one is its own cluster)"
    judge_failure_policy: str = JUDGE_FAILURE_POLICY
    level_rules: dict[str, LevelRule] = Field(default_factory=dict)


class ScoreReport(ScoreGroup):
    disciplines: dict[str, ScoreGroup] = Field(default_factory=dict)
    settings: ReportSettings

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    def write(self, path: Path) -> None:
        """Write atomically (temp file + rename) so a crash never leaves half a scores.json."""
        temp = path.with_suffix(path.suffix + ".tmp")
        temp.write_text(self.to_json() + "\n", encoding="utf-8")
        temp.replace(path)

    @classmethod
    def from_json(cls, text: str) -> ScoreReport:
        return cls.model_validate_json(text)
