"""`audit.json`: the audit's result, a contract other tools read (the recipes' release gate, the
platform's re-review queue), and its reader.

Kept stable (version 1), whatever else is added:

- `solvers`: one entry per (solver, task) tested: `name`, `task`, `accuracy`, `chance`, `ci_low`,
  `ci_high` (95% Clopper-Pearson), `n` (items the solver answered), `flagged` (its accuracy beats
  chance after Holm's correction over every test of the audit, and the solver reads only what the
  evaluated model is given), plus `family`, `hits`, `p_value`, `p_holm`, `ci_low_corrected` (the
  one-sided lower bound at the test's Holm level: above `chance` for every flagged solver),
  `beats_chance` (the test alone) and `informational` (why a solver that beats chance flags
  nothing in the suite's evaluation setting, e.g. it reads a transcript the model is not shown);
- `items`: one entry per item of the release, in release order: `id` (the suite's own item id),
  `task`, `flags` (names of what flagged it; empty when nothing did) and `reasons` (flag -> why).

Flag names are the names of flagged solvers ("longest option") and of the item checks and
controls (`CHECKS`).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from expvid.schema import DataError
from expvid.schema.records import utc_now

AUDIT_VERSION = 1

#: Item flags that do not come from a solver, with what each means (shown in reports).
CHECKS: dict[str, str] = {
    "near-duplicate options": "two options are the same answer written twice (a second correct option)",
    "invalid record": "the record could not become an item (e.g. its answer is not one of its options)",
    "option count": "the item has another number of options than its task",
    "time range": "a time range of the item starts after it ends or lies outside the video",
    "answer in question": "the correct answer is written in the question",
    "answerable without the video": "several models answer it correctly without any frame",
    "candidate wrong key": "every model misses it, agreeing on the same other option",
}


class SolverResult(BaseModel):
    name: str
    task: str
    family: str = ""
    description: str = ""
    accuracy: float
    chance: float
    ci_low: float
    ci_high: float
    n: int
    flagged: bool
    #: Accuracy above chance after the correction, whether or not it counts in this setting.
    beats_chance: bool = False
    #: Why this solver flags nothing in the suite's evaluation setting (None: it counts).
    informational: str | None = None
    hits: float = 0.0
    p_value: float = 1.0
    p_holm: float = 1.0
    ci_low_corrected: float = 0.0


class ItemResult(BaseModel):
    id: str
    task: str
    flags: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)

    def flag(self, name: str, reason: str) -> None:
        if name not in self.flags:
            self.flags.append(name)
            self.reasons[name] = reason


class TaskSummary(BaseModel):
    task: str
    items: int
    choice_items: int = 0
    mean_chance: float | None = None
    flagged_items: int = 0
    flagged_solvers: list[str] = Field(default_factory=list)
    best_solver: str | None = None
    best_accuracy: float | None = None


class AuditReport(BaseModel):
    """Everything one audit found (`audit.json`)."""

    version: int = AUDIT_VERSION
    suite: str | None = None
    data: str | None = None
    fingerprint: str | None = None
    created_at: datetime = Field(default_factory=utc_now)
    settings: dict[str, Any] = Field(default_factory=dict)
    solvers: list[SolverResult] = Field(default_factory=list)
    items: list[ItemResult] = Field(default_factory=list)
    tasks: list[TaskSummary] = Field(default_factory=list)
    #: Records of the release that could not become items (`file:line: message`).
    problems: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    #: Controls from model runs (`expvid.audit.controls`), when runs were given.
    controls: dict[str, Any] | None = None
    #: Item analysis across models (`expvid.audit.item_analysis`), when two or more runs were given.
    item_analysis: dict[str, Any] | None = None

    @property
    def flagged_solvers(self) -> list[SolverResult]:
        return [solver for solver in self.solvers if solver.flagged]

    @property
    def informational_solvers(self) -> list[SolverResult]:
        """Solvers that beat chance but read what the evaluated model is not given (flag nothing)."""
        return [solver for solver in self.solvers if solver.beats_chance and solver.informational]

    @property
    def flagged_items(self) -> list[ItemResult]:
        return [item for item in self.items if item.flags]

    @property
    def any_flagged(self) -> bool:
        return bool(self.flagged_solvers or self.flagged_items)

    def item(self, item_id: str) -> ItemResult:
        for entry in self.items:
            if entry.id == item_id:
                return entry
        raise KeyError(item_id)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        temporary.replace(path)


def read_audit(path: str | Path) -> AuditReport:
    """An `audit.json` (or the folder holding one) as an `AuditReport`; `DataError` naming the file
    when it is missing, not JSON, or not an audit."""
    file = Path(path)
    if file.is_dir():
        file = file / "audit.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{file}: no audit.json there (run `expvid audit`)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"{file}: cannot read it: {error}") from None
    except json.JSONDecodeError as error:
        raise DataError(f"{file}:{error.lineno}: not JSON: {error.msg}") from None
    if not isinstance(data, dict) or "solvers" not in data or "items" not in data:
        raise DataError(f"{file}: not an audit.json (no solvers and items)")
    version = data.get("version", AUDIT_VERSION)
    if isinstance(version, int) and version > AUDIT_VERSION:
        raise DataError(f"{file}: audit version {version} is newer than this expvid reads ({AUDIT_VERSION})")
    try:
        return AuditReport.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise DataError(f"{file}: {where}: {first['msg']}") from None
