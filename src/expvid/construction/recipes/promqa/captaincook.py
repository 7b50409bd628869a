"""Reading CaptainCook4D's annotation release (github.com/CaptainCook4D/annotations) as published.

The files this recipe needs, relative to the annotations folder (a clone of that repository):

- `annotation_json/error_annotations.json`: a JSON list, one record per recording:
  `{recording_id, activity_id, is_error, step_annotations: [{step_id, description, start_time,
  end_time, errors?: [{tag, description}], modified_description?}]}`. Step ids are global (one id
  per distinct step text across all recipes); a missing step has start and end -1 and a
  "Missing Step" error; `modified_description` merges the recipe step with how the person deviated
  from it ("Rinse-Rinse 1 medium sized zucchini" for a cucumber step).
- `annotation_json/complete_step_annotations.json`: recording id -> `{activity_id, activity_name,
  ...}`; the only file that names the activities ("Cucumber Raita").
- `task_graphs/<activity name, lower case, no spaces>.json`: `{steps: {local id: text}, edges}`.

What the ProMQA preprocessing does to these before making examples, done here as general rules:
- steps are sorted by start time (the release's step order does not always follow the times);
- global step ids become recipe-local ids by text; a text the recipe holds more than once ("Stir
  the contents" twice) gets its nodes in topological order, occurrence by occurrence, extra
  occurrences keeping the last node. ProMQA wrote this out by hand for the three recipes concerned
  (`adjust_step_id`: 13 then 8 for the repeated microwaving of Dressed Up Meatballs, ...); the
  rule reproduces its table;
- a START step ("Start-Start cooking.", id -1) from 0 to the first performed step's start is put
  first, so that "what is next" can be asked before anything is done.
ProMQA's hand corrections of individual records (a swapped pair, an error tag it judged wrong) are
curation of that corpus, not rules: they come as a corrections file (`corrections.py`; ProMQA's own
with `-R corrections=promqa`), applied to each raw record before it is read.

Every record that cannot be read is reported as file:line and skipped; the others load. A step
that cannot be placed on the recipe (its text is not a step of the task graph) or that lasts no
time does not cost the recording: the step is kept and marked, and `examples.py` leaves out only
the examples it touches (listed in `warnings`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from expvid.construction.recipes.promqa.corrections import CorrectionOutcome, CorrectionSet, apply_corrections
from expvid.construction.recipes.promqa.graph import RecipeError, RecipeGraph, activity_key
from expvid.schema import DataError, RecordProblem
from expvid.suites.release_io import json_records, read_release_bytes

ERROR_FILE = "annotation_json/error_annotations.json"
ACTIVITY_FILE = "annotation_json/complete_step_annotations.json"
GRAPH_DIR = "task_graphs"
MISSING_TAG = "Missing Step"
START_DESCRIPTION = "Start-Start cooking."
START_STEP_ID = -1
#: CaptainCook4D's error categories (`error_category_idx.json`).
ERROR_TAGS = (
    "Preparation Error",
    "Measurement Error",
    "Order Error",
    "Timing Error",
    "Technique Error",
    "Temperature Error",
    MISSING_TAG,
    "Other",
)


@dataclass(frozen=True)
class ErrorLabel:
    tag: str
    description: str

    def as_dict(self) -> dict[str, str]:
        return {"tag": self.tag, "description": self.description}


@dataclass(frozen=True)
class StepAnnotation:
    """One annotated action of a recording (recipe-local `step_id`; -1 = the START step)."""

    step_id: int
    description: str
    start: float
    end: float
    errors: tuple[ErrorLabel, ...] = ()
    modified_description: str | None = None
    #: CaptainCook4D's global step id (None for START).
    source_step_id: int | None = None
    #: False when the step's text is not a step of the recipe: `step_id` is then CaptainCook4D's
    #: global id, which names no node of the graph.
    placed: bool = True

    @property
    def zero_length(self) -> bool:
        """Performed, but with no duration (an annotation fault: it ends at or before its start)."""
        return self.end >= 0 and self.end <= self.start

    @property
    def is_missing(self) -> bool:
        """Skipped in the recording: a "Missing Step" error or no time (ProMQA's rule)."""
        return self.end < 0 or any(e.tag == MISSING_TAG for e in self.errors)

    @property
    def shown_description(self) -> str:
        """What the recording shows: the modified description when there is one (B.1)."""
        return self.modified_description if self.modified_description is not None else self.description

    def has_error(self, tag: str) -> bool:
        return any(e.tag == tag for e in self.errors)

    def error_description(self, tag: str) -> str | None:
        """The last error of this tag (the official code keeps the last one)."""
        found = [e.description for e in self.errors if e.tag == tag]
        return found[-1] if found else None


@dataclass
class Recording:
    recording_id: str
    activity_id: str
    activity_name: str
    is_error: bool
    #: START first, then the annotated steps sorted by start time.
    steps: list[StepAnnotation]
    source: str = ""


@dataclass
class Corpus:
    """Recordings and recipes that loaded, plus everything that did not (file:line, reason)."""

    root: Path
    recordings: list[Recording] = field(default_factory=list)
    recipes: dict[str, RecipeGraph] = field(default_factory=dict)  # activity id -> graph
    problems: list[RecordProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: What the corrections file did, when one was given.
    corrections: CorrectionOutcome | None = None
    #: Recordings read but set aside before examples are made, with why ("no 4K video").
    excluded: dict[str, str] = field(default_factory=dict)

    def recipe_for(self, recording: Recording) -> RecipeGraph:
        return self.recipes[recording.activity_id]


def annotations_root(root: Path) -> Path:
    """The folder holding `annotation_json/` and `task_graphs/`: `root` itself or `root/annotations`."""
    for candidate in (root, root / "annotations"):
        if (candidate / ERROR_FILE).is_file():
            return candidate
    raise DataError(
        f"{root}: no CaptainCook4D annotations (expected {ERROR_FILE} and {GRAPH_DIR}/ here or under "
        "annotations/, as in github.com/CaptainCook4D/annotations)"
    )


def _line_of_key(text: str, key: str) -> int:
    position = text.find(json.dumps(key) + ":")
    return text.count("\n", 0, position) + 1 if position >= 0 else 1


def _read_json(path: Path) -> tuple[Any, str] | RecordProblem:
    data = read_release_bytes(path)
    if isinstance(data, RecordProblem):
        return data
    try:
        text = data.decode("utf-8-sig")
        return json.loads(text), text
    except UnicodeDecodeError as error:
        return RecordProblem(path, data[: error.start].count(b"\n") + 1, f"not UTF-8 text ({error.reason})")
    except json.JSONDecodeError as error:
        return RecordProblem(path, error.lineno, f"invalid JSON ({error.msg})")


def _activity_names(path: Path, corpus: Corpus) -> dict[str, str]:
    """activity id -> name, from complete_step_annotations.json."""
    loaded = _read_json(path)
    if isinstance(loaded, RecordProblem):
        raise DataError([loaded])
    value, text = loaded
    if not isinstance(value, dict):
        raise DataError([RecordProblem(path, 1, "expected an object mapping recording ids to recordings")])
    names: dict[str, str] = {}
    for recording_id, record in value.items():
        activity = record.get("activity_id") if isinstance(record, dict) else None
        name = record.get("activity_name") if isinstance(record, dict) else None
        if activity is None or not isinstance(name, str) or not name.strip():
            line = _line_of_key(text, recording_id)
            corpus.problems.append(
                RecordProblem(path, line, f"{recording_id}: no activity_id / activity_name")
            )
            continue
        known = names.setdefault(str(activity), name)
        if known != name:
            line = _line_of_key(text, recording_id)
            corpus.problems.append(
                RecordProblem(path, line, f"activity {activity} is named {name!r} here and {known!r} before")
            )
    return names


def _recipes(root: Path, names: dict[str, str], corpus: Corpus) -> None:
    for activity_id, name in sorted(names.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
        path = root / GRAPH_DIR / f"{activity_key(name)}.json"
        if not path.is_file():
            corpus.problems.append(
                RecordProblem(path, 0, f"no task graph for activity {activity_id} ({name})")
            )
            continue
        loaded = _read_json(path)
        if isinstance(loaded, RecordProblem):
            corpus.problems.append(loaded)
            continue
        try:
            corpus.recipes[activity_id] = RecipeGraph.from_release(activity_id, name, loaded[0])
        except RecipeError as error:
            corpus.problems.append(RecordProblem(path, 1, str(error)))


class _BadRecording(ValueError):
    pass


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _BadRecording(f"{what} must be a number, got {value!r}")
    return float(value)


def _step(raw: Any, index: int) -> tuple[int, StepAnnotation]:
    if not isinstance(raw, dict):
        raise _BadRecording(f"step {index + 1} is not an object")
    step_id = raw.get("step_id")
    description = raw.get("description")
    if isinstance(step_id, bool) or not isinstance(step_id, int):
        raise _BadRecording(f"step {index + 1}: step_id must be an integer, got {step_id!r}")
    if not isinstance(description, str) or not description:
        raise _BadRecording(f"step {index + 1}: no description")
    errors_raw = raw.get("errors", [])
    if not isinstance(errors_raw, list) or not all(
        isinstance(e, dict) and isinstance(e.get("tag"), str) and isinstance(e.get("description"), str)
        for e in errors_raw
    ):
        raise _BadRecording(f"step {index + 1}: errors must be a list of {{tag, description}}")
    modified = raw.get("modified_description")
    if modified is not None and not isinstance(modified, str):
        raise _BadRecording(f"step {index + 1}: modified_description must be text")
    step = StepAnnotation(
        step_id=step_id,
        description=description,
        start=_number(raw.get("start_time"), f"step {index + 1}: start_time"),
        end=_number(raw.get("end_time"), f"step {index + 1}: end_time"),
        errors=tuple(ErrorLabel(e["tag"], e["description"]) for e in errors_raw),
        modified_description=modified,
        source_step_id=step_id,
    )
    return step_id, step


def _local_ids(
    steps: list[StepAnnotation], recipe: RecipeGraph, warn: list[str], where: str
) -> list[StepAnnotation]:
    """Global CaptainCook4D step ids -> the recipe's node ids, by step text (see the module doc).
    A text the recipe does not hold keeps its global id, marked not placed (warned in `warn`)."""
    used: dict[str, int] = {}
    mapped = []
    for step in steps:
        nodes = recipe.text_nodes(step.description)
        if not nodes:
            warn.append(
                f"{where}: step {step.description!r} is not a step of the recipe {recipe.name!r}; the examples "
                "whose prefix holds it are left out (a corrections file can fix the text: -R corrections=)"
            )
            mapped.append(replace(step, placed=False))
            continue
        occurrence = used.get(step.description, 0)
        used[step.description] = occurrence + 1
        mapped.append(replace(step, step_id=nodes[min(occurrence, len(nodes) - 1)]))
    return mapped


def _recording(record: dict[str, Any], corpus: Corpus, names: dict[str, str], source: str) -> Recording:
    recording_id = record.get("recording_id")
    activity = record.get("activity_id")
    if not isinstance(recording_id, str | int) or isinstance(recording_id, bool) or recording_id == "":
        raise _BadRecording("no recording_id")
    if activity is None or str(activity) not in names:
        raise _BadRecording(f"{recording_id}: activity {activity!r} has no name in {ACTIVITY_FILE}")
    recipe = corpus.recipes.get(str(activity))
    if recipe is None:
        raise _BadRecording(f"{recording_id}: activity {activity} has no usable task graph")
    raw_steps = record.get("step_annotations")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise _BadRecording(f"{recording_id}: step_annotations must be a non-empty list")
    steps = [_step(raw, i)[1] for i, raw in enumerate(raw_steps)]
    ordered = sorted(steps, key=lambda s: s.start)  # stable, as ProMQA's update_step_order
    if ordered != steps:
        corpus.warnings.append(f"{source}: {recording_id}: steps re-ordered by start time")
    local = _local_ids(ordered, recipe, corpus.warnings, f"{source}: {recording_id}")
    for step in local:
        if step.zero_length:
            corpus.warnings.append(
                f"{source}: {recording_id}: step {step.description!r} ends at or before its start "
                f"({step.start:g} -> {step.end:g} s); its own examples are left out"
            )
        if step.is_missing and step.end >= 0:
            corpus.warnings.append(f"{source}: {recording_id}: missing step {step.description!r} has times")
    first = next((s.start for s in local if s.start >= 0), 0.0)
    start = StepAnnotation(step_id=START_STEP_ID, description=START_DESCRIPTION, start=0.0, end=first)
    return Recording(
        recording_id=str(recording_id),
        activity_id=str(activity),
        activity_name=names[str(activity)],
        is_error=bool(record.get("is_error", False)),
        steps=[start, *local],
        source=source,
    )


def load_captaincook(
    root: Path | str, *, strict: bool = False, corrections: CorrectionSet | None = None
) -> Corpus:
    """Load the annotations under `root` (see `annotations_root`), each record corrected by
    `corrections` first when given; bad records are listed, not fatal."""
    base = annotations_root(Path(root).expanduser())
    corpus = Corpus(root=base)
    by_recording = corrections.by_recording() if corrections is not None else {}
    if corrections is not None:
        corpus.corrections = CorrectionOutcome(file=str(corrections.path))
    names = _activity_names(base / ACTIVITY_FILE, corpus)
    _recipes(base, names, corpus)
    path = base / ERROR_FILE
    data = read_release_bytes(path)
    if isinstance(data, RecordProblem):
        raise DataError([data])
    seen: dict[str, int] = {}
    for line, record in json_records(path, data):
        if isinstance(record, RecordProblem):
            corpus.problems.append(record)
            continue
        fixes = by_recording.get(str(record.get("recording_id")))
        if fixes and corrections is not None and corpus.corrections is not None:
            record = apply_corrections(record, fixes, corrections.path, corpus.corrections)
        try:
            recording = _recording(record, corpus, names, f"{path.name}:{line}")
        except _BadRecording as error:
            corpus.problems.append(RecordProblem(path, line, str(error)))
            continue
        if recording.recording_id in seen:
            corpus.problems.append(
                RecordProblem(
                    path, line, f"recording {recording.recording_id} appears twice (first on line "
                    f"{seen[recording.recording_id]})",
                )
            )  # fmt: skip
            continue
        seen[recording.recording_id] = line
        corpus.recordings.append(recording)
    if corpus.corrections is not None:
        corpus.corrections.not_in_corpus = sum(len(v) for k, v in by_recording.items() if k not in seen)
    if strict and corpus.problems:
        raise DataError(corpus.problems)
    return corpus
