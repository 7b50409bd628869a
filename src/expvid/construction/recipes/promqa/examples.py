"""From annotated recordings to ProMQA examples (section 3.1, appendix B.1).

For a recording with n actions the prefixes `video_{0:k}` (k = 0..n; k = 0 is the START step,
before anything is done) each make one `d_init`; each `d_init` gives up to eight `d_type`, one per
question type. The rules, as the official preprocessing (`create_example.py`) applies them:

- a *next* example for every prefix, and a *missing* example for every prefix but `video_0`;
- the six error types (order, preparation, measurement, timing, technique, temperature) only when
  the last step of the prefix carries an error of that type (LLMs asked about a type with no
  matching error wrote invalid questions);
- no example at all when the prefix is shorter than five seconds (the step ends before 5 s), when
  a later step overlaps the prefix (it would show part of the next action: a later step starting
  more than 2 s before the prefix ends, or 90% into it for steps shorter than 2 s), for skipped
  steps, or for the second occurrence of a step performed twice (its ids would repeat);
- steps are described by their "modified description" (the recipe step merged with how the person
  deviated from it), with their error labels;
- `is_noisy`: some previous step has an error (for *missing*, errors other than "Missing Step";
  for *order*, errors other than order errors and missing steps).

Annotation faults cost only the examples they touch, not the recording: a step whose text is not
in the recipe graph has no node, so every prefix that holds it (its own and all later ones) is left
out: their next / missing targets would be wrong and their history names a step the graph does not
have. A step that lasts no time is on the graph but shows nothing: only its own prefix is left out.

The prefix ends where the latest step so far ends (`end_seconds`, exact: the clip is cut there);
the release writes it as HH:MM:SS truncated to the second (`end_time`), so a model shown
[0, end_time] never sees a frame past the clip.
Ids come from the content: `example_id` = recording + step id, `question_id` = example + type.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from expvid.construction.recipes.promqa.captaincook import Recording, StepAnnotation
from expvid.construction.recipes.promqa.graph import RecipeGraph

#: Question types in the order the official code creates them.
QUESTION_TYPES = (
    "next",
    "missing",
    "order",
    "preparation",
    "measurement",
    "timing",
    "technique",
    "temperature",
)
ERROR_TYPES = QUESTION_TYPES[2:]
#: Question type -> CaptainCook4D error tag.
ERROR_TAG = {kind: f"{kind.capitalize()} Error" for kind in ERROR_TYPES}
NO_ERROR_PREFIX = "This step does not contain any"


@dataclass(frozen=True)
class PrefixRules:
    """B.1's skip rules, with the official values."""

    #: A prefix whose current step ends before this many seconds is too short.
    min_seconds: float = 5.0
    #: A later step overlaps the prefix when it starts this much before the prefix ends.
    overlap_margin: float = 2.0
    #: ... or, for steps shorter than `short_step`, when `short_fraction` of it lies before the end.
    short_step: float = 2.0
    short_fraction: float = 0.9


@dataclass
class Example:
    """One `d_type`: a prefix of a recording and a question type (release keys in `record()`)."""

    recording_id: str
    activity_id: str
    activity_name: str
    example_id: str
    question_id: str
    type: str
    end_seconds: float
    previous_steps: list[dict[str, Any]]
    current_step: dict[str, Any]
    is_noisy: bool
    next_steps: list[dict[str, Any]] | None = None
    missing_steps: list[dict[str, Any]] | None = None
    error_description: str | None = None

    @property
    def end_time(self) -> str:
        return hhmmss(self.end_seconds)

    @property
    def has_target(self) -> bool:
        """Whether there is something to ask about: next / missing steps, or a real error."""
        if self.type == "next":
            return bool(self.next_steps)
        if self.type == "missing":
            return bool(self.missing_steps)
        return not (self.error_description or "").startswith(NO_ERROR_PREFIX)

    @property
    def n_targets(self) -> int:
        if self.type == "next":
            return len(self.next_steps or [])
        if self.type == "missing":
            return len(self.missing_steps or [])
        return int(self.has_target)

    @property
    def error_steps(self) -> int:
        """Previous steps with at least one error (sampling skips examples with too many)."""
        return sum(1 for s in self.previous_steps if s.get("errors")) if self.is_noisy else 0

    def record(self) -> dict[str, Any]:
        """The release's keys, in the release's order."""
        record: dict[str, Any] = {
            "recording_id": self.recording_id,
            "example_id": self.example_id,
            "end_time": self.end_time,
            "activity_name": self.activity_name,
            "previous_steps": self.previous_steps,
            "current_step": self.current_step,
            "type": self.type,
        }
        if self.type == "next":
            record["next_steps"] = self.next_steps
        elif self.type == "missing":
            record["missing_steps"] = self.missing_steps
        else:
            record["error_description"] = self.error_description
        record["question_id"] = self.question_id
        record["is_noisy"] = self.is_noisy
        return record


@dataclass
class ExampleSet:
    examples: list[Example] = field(default_factory=list)
    #: Why prefixes or types were skipped, counted (for the report).
    skipped: Counter[str] = field(default_factory=Counter)


def hhmmss(seconds: float) -> str:
    """The official `format2hhmmss`: whole seconds, truncated."""
    whole = int(seconds)
    return f"{whole // 3600:02}:{whole % 3600 // 60:02}:{whole % 60:02}"


def _shown(step: StepAnnotation) -> dict[str, Any]:
    shown: dict[str, Any] = {"step_id": step.step_id, "description": step.shown_description}
    if step.errors:
        shown["errors"] = [e.as_dict() for e in step.errors]
    return shown


def _has_errors(steps: list[dict[str, Any]], exclude: tuple[str, ...] = ()) -> bool:
    return any(e["tag"] not in exclude for s in steps for e in s.get("errors", []))


def _overlaps(index: int, end: float, steps: list[StepAnnotation], rules: PrefixRules) -> bool:
    """A later (performed, long enough) step starts inside the prefix."""
    for step in steps[index + 1 :]:
        if step.is_missing or step.end < rules.min_seconds:
            continue
        duration = step.end - step.start
        lead = duration * rules.short_fraction if duration < rules.short_step else rules.overlap_margin
        if max(0.0, step.start + lead) < min(end, step.end):
            return True
    return False


@dataclass
class _Prefix:
    """One `d_init` (a prefix ending with `step`) while its `d_type` are made."""

    recording: Recording
    example_id: str
    end: float
    previous: list[dict[str, Any]]
    current: dict[str, Any]
    overlap: bool

    def make(self, kind: str, **target: Any) -> Example:
        return Example(
            recording_id=self.recording.recording_id,
            activity_id=self.recording.activity_id,
            activity_name=self.recording.activity_name,
            example_id=self.example_id,
            question_id=f"{self.example_id}_{kind}",
            type=kind,
            end_seconds=self.end,
            previous_steps=[dict(s) for s in self.previous],
            current_step=dict(self.current),
            **target,
        )

    def wanted(self, kind: str, out: ExampleSet, seen: set[str]) -> bool:
        question_id = f"{self.example_id}_{kind}"
        if question_id in seen:
            out.skipped[f"{kind}: step performed again"] += 1
            return False
        if self.overlap:
            out.skipped[f"{kind}: a later step overlaps the prefix"] += 1
            return False
        seen.add(question_id)
        return True


def recording_examples(
    recording: Recording, recipe: RecipeGraph, rules: PrefixRules = PrefixRules()
) -> ExampleSet:
    """Every `d_type` of one recording (before sampling)."""
    out = ExampleSet()
    seen: set[str] = set()
    previous: list[dict[str, Any]] = []
    steps = recording.steps
    unplaced = False
    for index, step in enumerate(steps):
        if step.is_missing:
            out.skipped["skipped step (not performed)"] += 1
            continue
        unplaced = unplaced or not step.placed
        if unplaced:
            out.skipped["the prefix holds a step that is not in the recipe graph"] += 1
            continue
        if step.end < rules.min_seconds:
            out.skipped["prefix shorter than 5 s"] += 1
            continue
        if step.zero_length:
            out.skipped["the step lasts no time"] += 1
            if step.step_id > 0:
                previous.append(_shown(step))
            continue
        end = max(s.end for s in steps[: index + 1])
        prefix = _Prefix(
            recording,
            f"{recording.recording_id}_{step.step_id}",
            end,
            previous,
            _shown(step),
            _overlaps(index, end, steps, rules),
        )
        performed = [s["step_id"] for s in previous] + [step.step_id]
        if prefix.wanted("next", out, seen):
            nxt = [{"step_id": n, "description": recipe.steps[n]} for n in recipe.next_steps(performed)]
            out.examples.append(prefix.make("next", next_steps=nxt, is_noisy=_has_errors(previous)))
        if step.step_id > 0 and prefix.wanted("missing", out, seen):
            missing = [
                {"step_id": n, "description": recipe.steps[n]} for n in recipe.missing_steps(performed)
            ]
            noisy = _has_errors(previous, ("Missing Step",))
            out.examples.append(prefix.make("missing", missing_steps=missing, is_noisy=noisy))
        for kind in ERROR_TYPES:
            tag = ERROR_TAG[kind]
            if step.step_id <= 0 or not step.has_error(tag) or not prefix.wanted(kind, out, seen):
                continue
            exclude = ("Order Error", "Missing Step") if kind == "order" else ()
            out.examples.append(
                prefix.make(
                    kind,
                    error_description=step.error_description(tag),
                    is_noisy=_has_errors(previous, exclude),
                )
            )
        if step.step_id > 0:
            previous.append(prefix.current)
    return out
