"""Hand corrections of an annotation corpus, as a data file applied when the corpus is read.

ProMQA fixed 46 annotation mistakes of CaptainCook4D by hand before making examples (a step text
that is not in the task graph, error tags it judged wrong, swapped steps, missing-step times). The
official repository publishes them only as code; `corrections/promqa.yaml` states them as data in
this module's format, and `-R corrections=promqa` applies them (`-R corrections=PATH` applies a
lab's own file). The format, one entry per edit:

    format: expvid-annotation-corrections/1
    corrections:
      - recording: "2_26"          # the record's recording_id
        step: 13                   # 0-based position in its step_annotations, as published
        expect: {description: "Microwave-Microwave for 1.5 minutes"}   # published values, checked
        set: {description: "Microwave-Microwave for 1 more minute"}    # new values
        why: step description not in the task graph
      - recording: "2_26"
        step: 15
        expect: {step_id: 18}
        remove: true               # the step is dropped

Fields that `set` may change: description, modified_description, step_id, start_time, end_time,
errors (a list of {tag, description}; [] removes them). Positions always refer to the published
order, so removing a step does not renumber the others. Edits are applied to the raw record before
anything else reads it (steps are then sorted by start time, as ProMQA's preprocessing does).

A file that cannot be read, or an entry without this shape, is refused with `file:line` before
any work. An entry whose `expect` does not match the corpus (another version of the annotations,
or a mistake already fixed upstream) is not applied and is reported as `file:line`; the rest are.
Entries for recordings the corpus does not hold (an excerpt, a filtered corpus) are counted.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from expvid.schema import DataError, RecordProblem

FORMAT = "expvid-annotation-corrections/1"
#: Names of the correction files shipped with expvid (`-R corrections=NAME`).
BUILT_IN = ("promqa",)
StepField = Literal["description", "modified_description", "step_id", "start_time", "end_time", "errors"]


class Correction(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    recording: str = Field(min_length=1)
    step: int = Field(ge=0)
    expect: dict[StepField, Any] = Field(default_factory=dict)
    changes: dict[StepField, Any] = Field(default_factory=dict, alias="set")
    remove: bool = False
    why: str = ""
    #: Line of the entry in its file (set when read).
    line: int = 0

    @model_validator(mode="after")
    def _one_edit(self) -> Correction:
        if self.remove == bool(self.changes):
            raise ValueError("give either `set` (the new values) or `remove: true`")
        errors = self.changes.get("errors")
        if "errors" in self.changes and not (
            isinstance(errors, list)
            and all(isinstance(e, dict) and set(e) == {"tag", "description"} for e in errors)
        ):
            raise ValueError("`errors` must be a list of {tag, description}")
        return self


@dataclass
class CorrectionSet:
    path: Path
    corrections: list[Correction]

    def by_recording(self) -> dict[str, list[Correction]]:
        grouped: dict[str, list[Correction]] = defaultdict(list)
        for correction in self.corrections:
            grouped[correction.recording].append(correction)
        return grouped


@dataclass
class CorrectionOutcome:
    """What applying a correction set to a corpus did (for the build report)."""

    file: str
    applied: int = 0
    recordings: set[str] = field(default_factory=set)
    not_in_corpus: int = 0
    problems: list[RecordProblem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "applied": self.applied,
            "recordings": sorted(self.recordings),
            "not_in_corpus": self.not_in_corpus,
            "not_applied": [str(p) for p in self.problems],
        }


def resolve(name_or_path: str) -> Path:
    """`promqa` -> the shipped file; anything else is a path."""
    if name_or_path in BUILT_IN:
        return Path(str(files(__package__).joinpath("corrections", f"{name_or_path}.yaml")))
    return Path(name_or_path).expanduser()


def read_corrections(name_or_path: str) -> CorrectionSet:
    """The corrections of a file (see the module doc); `DataError` naming file:line when malformed."""
    path = resolve(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except OSError as error:
        raise DataError(f"{path}: cannot read the corrections file ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error.reason})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise DataError([RecordProblem(path, line, f"not valid YAML ({error})")]) from None
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get("corrections"), list)
    ):
        raise DataError(
            [
                RecordProblem(
                    path, 1, f"expected `format: {FORMAT}` and a `corrections:` list (docs/build_promqa.md)"
                )
            ]
        )
    nodes = next(value for key, value in root.value if key.value == "corrections").value
    problems: list[RecordProblem] = []
    corrections: list[Correction] = []
    seen: dict[tuple[str, int], int] = {}
    for entry, node in zip(data["corrections"], nodes, strict=True):
        line = node.start_mark.line + 1
        try:
            if not isinstance(entry, dict):
                raise ValueError("an entry must be a mapping")
            correction = Correction.model_validate({**entry, "line": line})
        except (ValidationError, ValueError) as error:
            problems.append(RecordProblem(path, line, _message(error)))
            continue
        key = (correction.recording, correction.step)
        if key in seen:
            problems.append(
                RecordProblem(path, line, f"{key[0]} step {key[1]} is corrected on line {seen[key]} too")
            )
            continue
        seen[key] = line
        corrections.append(correction)
    if problems:
        raise DataError(problems)
    return CorrectionSet(path, corrections)


def _message(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: {e['msg']}"
            for e in error.errors(include_url=False)
        )
    return str(error)


def _matches(step: dict[str, Any], expect: dict[StepField, Any]) -> list[str]:
    """The `expect` fields the published step does not have (numbers compared as numbers)."""
    wrong = []
    for key, wanted in expect.items():
        value = step.get(key, [] if key == "errors" else None)
        same = (
            float(value) == float(wanted)
            if isinstance(value, int | float) and isinstance(wanted, int | float)
            else value == wanted
        )
        if not same:
            wrong.append(f"{key} is {value!r}, expected {wanted!r}")
    return wrong


def apply_corrections(
    record: dict[str, Any], corrections: list[Correction], path: Path, outcome: CorrectionOutcome
) -> dict[str, Any]:
    """A corrected copy of one raw recording record (the input is not changed)."""
    steps = record.get("step_annotations")
    if not isinstance(steps, list):
        return record
    fixed = copy.deepcopy(steps)
    removed: set[int] = set()
    for correction in corrections:
        where = f"{correction.recording} step {correction.step}"
        if correction.step >= len(steps) or not isinstance(steps[correction.step], dict):
            outcome.problems.append(
                RecordProblem(path, correction.line, f"{where}: the recording has {len(steps)} steps")
            )
            continue
        wrong = _matches(steps[correction.step], correction.expect)
        if wrong:
            outcome.problems.append(
                RecordProblem(path, correction.line, f"{where}: not applied, {'; '.join(wrong)}")
            )
            continue
        if correction.remove:
            removed.add(correction.step)
        else:
            fixed[correction.step].update(copy.deepcopy(correction.changes))
        outcome.applied += 1
        outcome.recordings.add(correction.recording)
    return {**record, "step_annotations": [s for i, s in enumerate(fixed) if i not in removed]}
