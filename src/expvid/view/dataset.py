"""The dataset a run was made on: where it is now, its items (gold answers, videos), and whether it
is still the same data.

A manifest records `dataset_root` as it was typed (often relative to wherever `expvid eval` ran)
and the dataset's fingerprint. The viewer looks for the root where a relative path most likely
points (the current directory, then the run directory and its parents), or takes `--data`, and
says whether the fingerprint still matches, comparing like with like: a run of `expvid eval`
fingerprinted its annotations and media, one of `expvid score --predictions` or `--from lmms-eval`
(and runs made before media were fingerprinted) its annotations only, so those are compared with the
annotations-only fingerprint of the data found now. Without a dataset the viewer still shows everything
the run recorded; only gold answers, questions and videos are missing, and it says so.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.schema import DataError, Item, SamplerSettings
from expvid.schema.dataset import TaskSpec
from expvid.suites.protocol import EvalSuite, FrameOptions
from expvid.suites.registry import get_suite

log = logging.getLogger(__name__)


def locate(recorded: str | None, run_root: Path, override: Path | None = None) -> Path | None:
    """The directory a recorded (possibly relative) path refers to, or None when none exists."""
    if override is not None:
        return override if override.is_dir() else None
    if not recorded:
        return None
    path = Path(recorded).expanduser()
    if path.is_absolute():
        return path if path.is_dir() else None
    bases = [Path.cwd(), run_root.parent, run_root, *list(run_root.resolve().parents)[:4]]
    for base in bases:
        candidate = base / path
        if candidate.is_dir():
            return candidate.absolute()
    return None


@dataclass
class RunDataset:
    """A run's dataset as found now (or not found, with why)."""

    suite_name: str
    suite: EvalSuite | None = None
    recorded_root: str | None = None
    root: Path | None = None
    items: dict[str, Item] = field(default_factory=dict)
    #: The ids the run's settings select (tasks, limit), in the suite's order.
    selected: list[str] = field(default_factory=list)
    tasks: dict[str, TaskSpec] = field(default_factory=dict)
    fingerprint: str | None = None
    #: "match", "differs", "not recorded" or "no dataset".
    fingerprint_status: str = "no dataset"
    problems: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def found(self) -> bool:
        return self.root is not None and bool(self.items)


def load_run_dataset(
    *,
    suite_name: str,
    suite_settings: dict[str, Any],
    recorded_root: str | None,
    recorded_fingerprint: str | None,
    run_root: Path,
    recorded_annotations: str | None = None,
    override: Path | None,
    tasks: list[str] | None,
    limit: int | None,
    loaded: dict[tuple[str, ...], Any] | None = None,
) -> RunDataset:
    """Load the dataset read-only (no media checks: a missing video must not hide the rest).

    `loaded` remembers datasets already read, so several runs of one dataset read it once.
    """
    result = RunDataset(suite_name=suite_name, recorded_root=recorded_root)
    try:
        suite = get_suite(suite_name, suite_settings)
    except (ValueError, TypeError) as error:
        result.note = f"cannot build suite {suite_name!r}: {error}"
        return result
    result.suite = suite
    result.tasks = {spec.name: spec for spec in suite.tasks}
    root = locate(recorded_root, run_root, override)
    if root is None:
        where = override if override is not None else recorded_root
        result.note = (
            f"dataset not found at {where!s} (pass --data DIR): no gold answers, questions or videos"
        )
        return result
    memo_key = (suite_name, json.dumps(suite_settings, sort_keys=True, default=str), str(root.resolve()))
    try:
        if loaded is not None and memo_key in loaded:
            dataset = loaded[memo_key]
        else:
            dataset = suite.load(root, strict=False, check_media=False)
            if loaded is not None:
                loaded[memo_key] = dataset
    except (DataError, OSError, ValueError) as error:
        result.note = f"cannot load the dataset at {root}: {error}"
        return result
    result.root = root
    result.items = {item.id: item for item in dataset.items}
    result.tasks.update({spec.name: spec for spec in dataset.tasks})
    result.problems = [str(problem) for problem in dataset.problems]
    # Like with like: a recorded fingerprint over annotations only (external predictions, older runs)
    # is compared with the annotations-only fingerprint of the data found now.
    annotations_only = recorded_annotations is None or recorded_annotations == recorded_fingerprint
    result.fingerprint = dataset.annotations_fingerprint() if annotations_only else dataset.fingerprint()
    if not recorded_fingerprint:
        result.fingerprint_status = "not recorded"
    elif recorded_fingerprint == result.fingerprint:
        result.fingerprint_status = "match"
    else:
        result.fingerprint_status = "differs"
        result.note = (
            f"the dataset at {root} changed since the run (fingerprint {result.fingerprint[:12]} vs "
            f"{recorded_fingerprint[:12]}): gold answers shown are today's"
        )
    groups = dataset.by_task()
    chosen = [t for t in tasks if t in groups] if tasks else list(groups)
    for task in chosen:
        members = groups[task]
        result.selected.extend(item.id for item in (members if limit is None else members[:limit]))
    return result


def sampler_for(
    item: Item, suite: EvalSuite | None, recorded: dict[str, SamplerSettings], frames: dict[str, Any] | None
) -> SamplerSettings | None:
    """The sampler settings the run used for this item: the manifest's for its task, else the suite's
    rule applied to the recorded frame options (runs that did not record samplers)."""
    if item.task in recorded:
        return recorded[item.task]
    if suite is None:
        return None
    try:
        options = FrameOptions.model_validate(frames or {})
        return suite.sampler(item, options)
    except (ValueError, TypeError) as error:
        log.warning("no sampler for %s: %s", item.id, error)
        return None
