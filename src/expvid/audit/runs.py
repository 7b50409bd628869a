"""Run directories as the audit reads them: which model, which frames control, each item's outcome.

Only the run's files are read (`manifest.json`, `item_scores.jsonl`, written by `expvid eval` and
`expvid score`); the audit never calls a model. A folder given to `--runs` may be one run or a
folder of runs (an `expvid eval-set` output): every folder below it holding a manifest.json is one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from expvid.schema import DataError, ExtractionStatus, ItemScore, RunManifest

MANIFEST = "manifest.json"
ITEM_SCORES = "item_scores.jsonl"


@dataclass(frozen=True)
class Outcome:
    """One item's result in one run: its score in 0..1 and the option it picked (choice items)."""

    score: float
    status: ExtractionStatus
    picked: str | None = None

    @property
    def answered(self) -> bool:
        """The model gave a readable answer (a failed request or an invalid record says nothing)."""
        return self.status in (ExtractionStatus.OK, ExtractionStatus.UNPARSEABLE)


@dataclass
class RunRecord:
    """One run directory: its model, frames control and the outcome of each item it scored."""

    path: Path
    model: str
    control: str
    annotations_fingerprint: str | None
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    @property
    def base_model(self) -> str:
        """The model without `blind:` and without its server URL: runs of one model pair up."""
        spec = self.model
        while spec.startswith("blind:"):
            spec = spec.removeprefix("blind:")
        for marker in ("@http://", "@https://"):
            index = spec.find(marker)
            if index > 0:
                spec = spec[:index]
        return spec


def find_runs(paths: list[Path]) -> list[Path]:
    """Every run directory at or below each path, in order, each once; `DataError` naming a path
    that holds none."""
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise DataError(f"--runs {path}: no such directory")
        runs = [path] if (path / MANIFEST).is_file() else sorted(p.parent for p in path.rglob(MANIFEST))
        if not runs:
            raise DataError(f"--runs {path}: no run directory there (no manifest.json at or below it)")
        found += [run for run in runs if run not in found]
    return found


def read_run(path: Path) -> RunRecord:
    """The run at `path`; `DataError` naming the file when it is not a scored run."""
    manifest_path = path / MANIFEST
    try:
        manifest = RunManifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{manifest_path}: not a run directory (no manifest.json)") from None
    except (OSError, ValidationError, UnicodeDecodeError) as error:
        raise DataError(f"{manifest_path}: unreadable manifest: {str(error).splitlines()[0]}") from None
    scores_path = path / ITEM_SCORES
    if not scores_path.is_file():
        raise DataError(f"{scores_path}: the run has no item scores yet (`expvid score {path}` writes them)")
    record = RunRecord(
        path=path,
        model=manifest.model,
        control=manifest.frames_control,
        annotations_fingerprint=manifest.annotations_fingerprint or manifest.dataset_fingerprint,
    )
    with scores_path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                score = ItemScore.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as error:
                raise DataError(
                    f"{scores_path}:{number}: not an item score: {str(error).splitlines()[0]}"
                ) from None
            value = score.earned / score.possible if score.possible else 0.0
            picked = score.extracted if isinstance(score.extracted, str) else None
            record.outcomes[score.item_id] = Outcome(value, score.status, picked)
    return record
