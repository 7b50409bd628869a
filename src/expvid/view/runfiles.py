"""One run directory as the viewer sees it: every file read-only, refreshed as it grows.

Records are kept twice: as the raw JSON object (so fields this version of expvid does not know,
from an older or newer run, are still shown) and as the schema model (for typed access such as
`Prediction.truncated`). A line the schema rejects is a problem naming file:line, never a crash,
and never silently dropped from the counts.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from expvid.run.rundir import ITEM_SCORES, JUDGMENTS, MANIFEST, PREDICTIONS, SCORES
from expvid.schema import DataError, ItemScore, Judgment, Prediction, RunManifest, describe_validation_error
from expvid.view.tail import FileStamp, JsonlTail, Line, read_json, read_jsonl_whole, stamps_token


class _RunItemScore(ItemScore):
    """A line of item_scores.jsonl: the sample it scores is part of the line (0 when absent)."""

    sample: int = 0


SAMPLE_SCORES = "sample_scores.jsonl"  # the name expvid.run.scoring_phase writes
WATCHED = (MANIFEST, PREDICTIONS, JUDGMENTS, ITEM_SCORES, SAMPLE_SCORES, SCORES)

M = TypeVar("M", bound=BaseModel)
Key = tuple[str, int]


class Record(Generic[M]):
    """A record as the schema reads it (`model`), as written (`raw`, parsed when first asked for:
    only item pages need it), and where (`line`)."""

    __slots__ = ("_raw", "line", "model", "text")

    def __init__(self, text: bytes, model: M, line: int) -> None:
        self.text = text
        self.model = model
        self.line = line
        self._raw: dict[str, Any] | None = None

    @property
    def raw(self) -> dict[str, Any]:
        if self._raw is None:
            value = json.loads(self.text)
            self._raw = value if isinstance(value, dict) else {}
        return self._raw


def parse(line: Line, schema: type[M], file: str) -> M | str:
    """The line as a schema model, or `file:line: why` (one JSON pass, in pydantic-core)."""
    try:
        return schema.model_validate_json(line.text)
    except ValidationError as error:
        return f"{file}:{line.number}: {describe_validation_error(error)}"


_key = operator.attrgetter("item_id", "sample")


@dataclass
class _Keyed(Generic[M]):
    """Records of one append-only file keyed by (item, sample); the last line wins."""

    path: Path
    schema: type[M]
    tail: JsonlTail = field(init=False)
    records: dict[Key, Record[M]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    lines: int = 0

    def __post_init__(self) -> None:
        self.tail = JsonlTail(self.path)

    def refresh(self) -> bool:
        restarted, lines = self.tail.read_new()
        if restarted:
            self.records.clear()
            self.problems.clear()
            self.lines = 0
        for line in lines:
            self.lines += 1
            self._add(line)
        return restarted or bool(lines)

    def _add(self, line: Line) -> None:
        model = parse(line, self.schema, self.path.name)
        if isinstance(model, str):
            self.problems.append(model)
            return
        item_id, sample = _key(model)
        self.records[(str(item_id), int(sample))] = Record(line.text, model, line.number)


class RunFiles:
    """Read-only view of one run directory; `refresh()` picks up what was written since."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not (root / MANIFEST).is_file():
            if not root.is_dir():
                raise DataError(f"{root}: no such run directory")
            raise DataError(f"{root}: not a run directory (no {MANIFEST})")
        self._predictions = _Keyed(root / PREDICTIONS, Prediction)
        self._judgments = _Keyed(root / JUDGMENTS, Judgment)
        self._stamps: dict[str, FileStamp | None] = {}
        self.manifest_raw: dict[str, Any] = {}
        self.manifest: RunManifest | None = None
        self.scores: dict[str, Any] | None = None
        self.item_scores: dict[Key, Record[ItemScore]] = {}  # (item, sample) -> score
        #: Modification time of item_scores.jsonl: a prediction written after it is not scored yet.
        self.item_scores_mtime: float | None = None
        self._whole_problems: dict[str, list[str]] = {}
        self.refresh()

    # -- reading ---------------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Read what changed; True when anything did."""
        changed = self._predictions.refresh()
        changed |= self._judgments.refresh()
        scores_changed = False
        for name in (MANIFEST, SCORES, ITEM_SCORES, SAMPLE_SCORES):
            stamp = FileStamp.of(self.root / name)
            if name in self._stamps and self._stamps[name] == stamp:
                continue
            self._stamps[name] = stamp
            changed = True
            if name == MANIFEST:
                self._read_manifest()
            elif name == SCORES:
                self.scores, problem = read_json(self.root / SCORES)
                self._whole_problems[SCORES] = [problem] if problem else []
            else:
                scores_changed = True
        if scores_changed:
            self._read_item_scores()
        return changed

    def _read_manifest(self) -> None:
        raw, problem = read_json(self.root / MANIFEST)
        problems = [problem] if problem else []
        if raw is not None:
            self.manifest_raw = raw
            try:
                self.manifest = RunManifest.model_validate(raw)
            except ValidationError as error:
                self.manifest = None
                problems.append(f"{MANIFEST}: {describe_validation_error(error)}")
        self._whole_problems[MANIFEST] = problems

    def _read_item_scores(self) -> None:
        merged: dict[Key, Record[ItemScore]] = {}
        problems: list[str] = []
        # sample_scores.jsonl holds every sample when there are several; item_scores.jsonl the headline.
        for name in (SAMPLE_SCORES, ITEM_SCORES):
            for line in read_jsonl_whole(self.root / name):
                model = parse(line, _RunItemScore, name)
                if isinstance(model, str):
                    problems.append(model)
                    continue
                merged[(model.item_id, model.sample)] = Record(line.text, model, line.number)
        self.item_scores = merged
        stamp = self._stamps.get(ITEM_SCORES)
        self.item_scores_mtime = None if stamp is None else stamp.mtime_ns / 1e9
        self._whole_problems[ITEM_SCORES] = problems

    # -- what the views use ------------------------------------------------------------------------

    @property
    def predictions(self) -> dict[Key, Record[Prediction]]:
        return self._predictions.records

    @property
    def judgments(self) -> dict[Key, Record[Judgment]]:
        return self._judgments.records

    @property
    def problems(self) -> list[str]:
        """Every unreadable line or file, as `file:line: why`."""
        found = list(self._predictions.problems) + list(self._judgments.problems)
        for problems in self._whole_problems.values():
            found.extend(problems)
        return found

    @property
    def prediction_lines(self) -> int:
        """Lines in predictions.jsonl (retried failures make it longer than the number of items)."""
        return self._predictions.lines

    @property
    def partial_tail(self) -> bool:
        """predictions.jsonl ends in a partial line right now (being written, or torn by a crash)."""
        return self._predictions.tail.pending_bytes > 0

    def token(self) -> str:
        """Changes whenever a file of the run changes (cheap: stats only)."""
        return stamps_token([self.root / name for name in WATCHED])
