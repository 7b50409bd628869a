"""Which model calls to ask afresh: failed units on the next run, and every call of a `--redo` stage.

The response cache replays any request it has seen, which is what makes a resumed build free, but
also what would make a failed unit fail forever: a refusal or invalid JSON that used up every re-ask
is cached, so re-running would replay the same bad replies. So every failure is written down here
(`.build/failed_calls.jsonl`, one line per failure, appended at once so a killed run keeps it), keyed
by the unit's first request; the next run asks that unit in the next *round*, a number that joins the
cache key (`metadata["cache_round"]`, never sent) so the model is really asked again, and the new
replies are cached under the new round. A unit that then succeeds keeps using its round on later
runs, so its answer is replayed from the cache like any other.

`--redo STAGE` starts a new *epoch* of a stage (`.build/redo.json`): every call of that stage gets a
new round, so the stage is drafted again from scratch, and failures are counted afresh in the epoch.
`--redo STAGE:EXPERIMENT` does the same for one experiment's stage only (a campaign re-drafts one
experiment without touching the others); the pipeline names the experiment whose calls are being
made in `CURRENT_EXPERIMENT` (a context variable, so it follows each experiment's tasks).
The round sent is `epoch * 1000 + failures of the unit in this epoch`; 0 (the plain cache key) when
both are 0, so a build that never failed shares its cache entries with any other user of the cache.
"""

from __future__ import annotations

import json
import threading
from contextvars import ContextVar
from pathlib import Path

from expvid.construction.state import epoch_of, write_atomic

#: Build stages whose calls can be redone; the names `--redo` accepts (`transcription`: speech-to-text
#: asked afresh, `speech/stage.py`).
REDO_STAGES = ("transcription", "curation", "level1", "level2", "level3", "blind_audit")
ROUNDS_PER_EPOCH = 1000
#: The experiment whose model calls the current task makes (None: not one experiment's call).
CURRENT_EXPERIMENT: ContextVar[str | None] = ContextVar("expvid_build_experiment", default=None)


def redo_problem(entry: str, stages: tuple[str, ...] = REDO_STAGES) -> str | None:
    """Why `entry` (`STAGE` or `STAGE:EXPERIMENT_ID`) is not a valid `--redo` value, else None."""
    stage, _, experiment = entry.partition(":")
    if stage not in stages:
        return f"unknown stage {stage!r} for --redo; stages: {', '.join(stages)}"
    if ":" in entry and not experiment.strip():
        return f"--redo {entry!r}: give an experiment id after the colon, e.g. {stage}:61842"
    return None


class RetryBook:
    """Failure rounds per unit and redo epochs per stage, persisted in the build state directory."""

    def __init__(self, root: Path, *, retry_failed: bool = True, read_only: bool = False) -> None:
        self.root = root
        self.retry_failed = retry_failed
        #: `--dry-run`: failures are not written down (a dry run writes nothing).
        self.read_only = read_only
        self._failures_path = root / "failed_calls.jsonl"
        self._epochs_path = root / "redo.json"
        self._lock = threading.Lock()
        self.failed: dict[str, int] = {}  # unit key -> highest round that failed
        if self._failures_path.is_file():
            for line in self._failures_path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                    key, round_ = str(entry["key"]), int(entry["round"])
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a crash
                self.failed[key] = max(round_, self.failed.get(key, -1))
        self.epochs: dict[str, int] = {}
        if self._epochs_path.is_file():
            try:
                loaded = json.loads(self._epochs_path.read_text(encoding="utf-8"))
                self.epochs = {str(k): int(v) for k, v in loaded.items()}
            except (ValueError, AttributeError, TypeError):
                self.epochs = {}
        self.retried: set[str] = set()  # units asked in a new round in this run

    def redo(self, stages: list[str], *, allowed: tuple[str, ...] = REDO_STAGES) -> None:
        """Start a new epoch of each stage (written at once: a killed redo is not redone twice)."""
        self.plan_redo(stages, allowed=allowed)
        if stages and not self.read_only:
            write_atomic(self._epochs_path, json.dumps(self.epochs, sort_keys=True) + "\n")

    def plan_redo(self, stages: list[str], *, allowed: tuple[str, ...] = REDO_STAGES) -> None:
        """The epochs a run with `--redo stages` will use, in memory only (what `--dry-run` plans with)."""
        for stage in stages:
            problem = redo_problem(stage, allowed)
            if problem is not None:
                raise ValueError(problem)
            self.epochs[stage] = self.epochs.get(stage, 0) + 1

    def epoch(self, stage: str) -> int:
        return epoch_of(self.epochs, stage, CURRENT_EXPERIMENT.get())

    def unit_key(self, stage: str, request_key: str) -> str:
        return f"{stage}:{self.epoch(stage)}:{request_key}"

    def round_for(self, stage: str, request_key: str) -> int:
        """The cache round to ask this unit in (see the module docstring)."""
        key = self.unit_key(stage, request_key)
        failed = self.failed.get(key)
        if failed is None:
            within = 0
        elif self.retry_failed:
            within = failed + 1
            self.retried.add(key)
        else:
            within = failed  # replay the failed round from the cache: nothing is paid again
        return self.epoch(stage) * ROUNDS_PER_EPOCH + within

    def record_failure(self, stage: str, request_key: str, round_: int) -> None:
        if self.read_only:
            return
        key = self.unit_key(stage, request_key)
        within = round_ % ROUNDS_PER_EPOCH
        with self._lock:
            if self.failed.get(key, -1) >= within:
                return
            self.failed[key] = within
            self.root.mkdir(parents=True, exist_ok=True)
            with self._failures_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, "round": within}) + "\n")
