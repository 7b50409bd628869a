"""Experiment scripts: the authored content of the sample benchmark (protocols/*.toml).

Each script is one synthetic JoVE-style experiment: stages of atomic steps (tool, material,
quantity, operation, narration), the paper's findings, and fill-in-the-blank questions built on
them. Content lives in TOML data files rather than Python dicts so it can be read and edited as
text; this module only parses and checks it, so an authoring slip fails loudly with the file name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from expvid.suites.sample.quantities import quantity_question

#: Marks a blank in an authored Level-3 question; the generator turns it into underscores.
BLANK_MARK = "{}"


class ScriptError(ValueError):
    """An experiment script is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class StepScript:
    text: str  # the step as written in the step list
    tool: str
    material: str
    quantity: str  # "500 µL", "37 °C", "3 washes"
    operation: str
    narration: str  # one or two sentences of the transcript
    quantity_question: str | None = None  # overrides the unit-based question template


@dataclass(frozen=True)
class StageScript:
    name: str
    steps: tuple[StepScript, ...]


@dataclass(frozen=True)
class BlankQuestion:
    text: str  # with BLANK_MARK for each blank
    answers: tuple[str, ...]


@dataclass(frozen=True)
class ExperimentScript:
    video_id: str
    title: str
    discipline: str
    curation: str  # "keep" or "reject"
    reject_reason: str
    #: Stage (1-based) whose narration is missing from the transcript (a continuity failure).
    transcript_gap_stage: int | None
    abstract: str
    introduction: str
    results: tuple[str, ...]
    discussion: tuple[str, ...]
    slide: tuple[str, ...]  # concluding-slide text lines
    slide_narration: str
    stages: tuple[StageScript, ...]
    analysis: tuple[BlankQuestion, ...]
    discovery: tuple[BlankQuestion, ...]
    distractor_tools: tuple[str, ...]
    distractor_materials: tuple[str, ...]
    distractor_operations: tuple[str, ...]

    @property
    def steps(self) -> tuple[StepScript, ...]:
        """All steps in order; step number n (1-based, global) is `steps[n - 1]`."""
        return tuple(step for stage in self.stages for step in stage.steps)

    @property
    def kept(self) -> bool:
        return self.curation == "keep"


def load_scripts() -> tuple[ExperimentScript, ...]:
    """All bundled experiment scripts, ordered by file name (so generation order is stable)."""
    folder = resources.files("expvid.suites.sample") / "protocols"
    entries = sorted(
        (entry for entry in folder.iterdir() if entry.name.endswith(".toml")), key=lambda e: e.name
    )
    return tuple(parse_script(entry.name, entry.read_text(encoding="utf-8")) for entry in entries)


def parse_script(name: str, text: str) -> ExperimentScript:
    """Parse one TOML script; `ScriptError` naming `name` and the field on any problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScriptError(f"{name}: not valid TOML ({exc})") from None
    reader = _Reader(name, data)
    stages = tuple(_stage(reader.at(f"stages[{i}]", raw)) for i, raw in enumerate(reader.tables("stages")))
    script = ExperimentScript(
        video_id=reader.text("id"),
        title=reader.text("title"),
        discipline=reader.text("discipline"),
        curation=reader.text("curation"),
        reject_reason=reader.text("reject_reason", default=""),
        transcript_gap_stage=reader.integer("transcript_gap_stage"),
        abstract=reader.text("abstract"),
        introduction=reader.text("introduction"),
        results=reader.texts("results"),
        discussion=reader.texts("discussion"),
        slide=reader.texts("slide"),
        slide_narration=reader.text("slide_narration"),
        stages=stages,
        analysis=tuple(
            _blank(reader.at(f"analysis[{i}]", q)) for i, q in enumerate(reader.tables("analysis"))
        ),
        discovery=tuple(
            _blank(reader.at(f"discovery[{i}]", q)) for i, q in enumerate(reader.tables("discovery"))
        ),
        distractor_tools=reader.texts("distractor_tools"),
        distractor_materials=reader.texts("distractor_materials"),
        distractor_operations=reader.texts("distractor_operations"),
    )
    _check(name, script)
    return script


def _stage(reader: _Reader) -> StageScript:
    steps = tuple(_step(reader.at(f"steps[{i}]", raw)) for i, raw in enumerate(reader.tables("steps")))
    return StageScript(name=reader.text("name"), steps=steps)


def _step(reader: _Reader) -> StepScript:
    return StepScript(
        text=reader.text("text"),
        tool=reader.text("tool"),
        material=reader.text("material"),
        quantity=reader.text("quantity"),
        operation=reader.text("operation"),
        narration=reader.text("narration"),
        quantity_question=reader.text("quantity_question", default="") or None,
    )


def _blank(reader: _Reader) -> BlankQuestion:
    question = BlankQuestion(text=reader.text("question"), answers=reader.texts("answers"))
    if question.text.count(BLANK_MARK) != len(question.answers) or not question.answers:
        raise ScriptError(
            f"{reader.where}: {question.text.count(BLANK_MARK)} blank mark(s) {BLANK_MARK!r} but "
            f"{len(question.answers)} answer(s)"
        )
    return question


def _check(name: str, script: ExperimentScript) -> None:
    if script.curation not in ("keep", "reject"):
        raise ScriptError(f"{name}: curation must be 'keep' or 'reject', got {script.curation!r}")
    if not script.stages:
        raise ScriptError(f"{name}: no stages")
    for number, stage in enumerate(script.stages, start=1):
        if not 3 <= len(stage.steps) <= 10:
            raise ScriptError(f"{name}: stage {number} has {len(stage.steps)} steps (3 to 10 needed)")
    for number, step in enumerate(script.steps, start=1):
        try:
            quantity_question(step.quantity, step.material, step.quantity_question)
        except ValueError as exc:
            raise ScriptError(f"{name}: step {number}: {exc}") from None
    if script.kept and not (script.analysis and script.discovery):
        raise ScriptError(f"{name}: a kept experiment needs analysis and discovery questions")


class _Reader:
    """Typed access to a TOML table that names the file and field in every error."""

    def __init__(self, where: str, data: dict[str, Any]) -> None:
        self.where = where
        self.data = data

    def at(self, field: str, data: Any) -> _Reader:
        if not isinstance(data, dict):
            raise ScriptError(f"{self.where}.{field}: expected a table")
        return _Reader(f"{self.where}.{field}", data)

    def text(self, key: str, *, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise ScriptError(f"{self.where}: {key!r} must be a string, got {value!r}")
        return value

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ScriptError(f"{self.where}: {key!r} must be an integer, got {value!r}")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ScriptError(f"{self.where}: {key!r} must be a list of strings")
        return tuple(value)

    def tables(self, key: str) -> list[Any]:
        value = self.data.get(key, [])
        if not isinstance(value, list):
            raise ScriptError(f"{self.where}: {key!r} must be an array of tables")
        return value
