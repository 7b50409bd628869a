"""What an exported Inspect AI task package calls at run time: its samples, and the suite's scorer.

The generated `tasks.py` is a shim over `build_task`. The samples are the files the exporter wrote
(`expvid.export.inspect`): each item's messages as `expvid eval` builds them, the frames as Inspect
image content (file references Inspect reads just before the request: the model gets the bytes,
never the path). The solver is Inspect's plain `generate()` at the suite's decoding defaults. The
scorer reads the reply exactly as `expvid eval` does: the suite's `extract`, its judge where one
decides (an LLM judge from the task argument `judge` or `EXPVID_JUDGE`, else the offline one), its
`score`; each sample's `Score` carries the expvid item id, the earned and possible points and the
extraction status, so `expvid score --from inspect` can put Inspect's verdict beside expvid's, item by
item. The metric `expvid_task_scores` is expvid's task score (0-100, `score_group`) per task.

This module imports `inspect_ai`: it runs in Inspect's environment only; nothing else in expvid
imports it.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from expvid.export.inspect import EXPORT_FILE, SAMPLES_FILE
from expvid.export.lmms_eval_runtime import item_score_of, score_record
from expvid.schema import Item

#: The scorer's name in Inspect's logs (what `expvid score --from inspect` reads).
SCORER = "expvid_scorer"


def build_task(package: Path, *, judge: str | None = None, tasks: str | None = None) -> Task:
    """The task of an exported package folder: its samples (of `tasks`, comma-separated), Inspect's
    `generate()` at the suite's decoding defaults, and the suite's scorer."""
    export = _export(str(package))
    wanted = {name.strip() for name in tasks.split(",") if name.strip()} if tasks else None
    unknown = sorted((wanted or set()) - set(export["tasks"]))
    if unknown:
        raise ValueError(
            f"unknown task(s) {', '.join(unknown)}; this package holds {', '.join(export['tasks'])}"
        )
    samples = [
        Sample(
            id=record["id"],
            input=[_message(message, package) for message in record["messages"]],
            target=record["target"],
            metadata={"expvid_id": record["id"], "task": record["task"], "frames": record["frames"]},
        )
        for record in _records(str(package))
        if wanted is None or record["task"] in wanted
    ]
    generation = export["generation"]
    return Task(
        dataset=MemoryDataset(samples, name=export["suite"]),
        solver=generate(),
        scorer=expvid_scorer(str(package), judge or os.environ.get("EXPVID_JUDGE")),
        config=GenerateConfig(temperature=generation["temperature"], max_tokens=generation["max_tokens"]),
        metadata={"expvid": {key: export[key] for key in ("suite", "settings", "exported_from", "fingerprint", "expvid", "frames")}},
    )  # fmt: skip


def _message(message: dict[str, Any], package: Path) -> ChatMessage:
    content: list[ContentText | ContentImage] = [
        ContentImage(image=str(package / part["image"]))
        if "image" in part
        else ContentText(text=part["text"])
        for part in message["content"]
    ]
    if message["role"] == "system":
        return ChatMessageSystem(content=content)
    if message["role"] == "assistant":
        return ChatMessageAssistant(content=content)
    return ChatMessageUser(content=content)


@cache
def _export(package: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((Path(package) / EXPORT_FILE).read_text(encoding="utf-8"))
    return data


@cache
def _records(package: str) -> list[dict[str, Any]]:
    with (Path(package) / SAMPLES_FILE).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@cache
def _items(package: str) -> dict[str, Item]:
    return {record["id"]: Item.model_validate(record["item"]) for record in _records(package)}


@cache
def _suite(package: str) -> Any:
    from expvid.suites.registry import get_suite

    export = _export(package)
    return get_suite(export["suite"], export["settings"])


_judges: dict[tuple[str, str | None], Any] = {}


def _judge(package: str, spec: str | None) -> Any:
    """The suite's judge for this package (built once): an LLM judge from `spec`, else the offline one."""
    key = (package, spec)
    if key not in _judges:
        options: dict[str, Any] = {}
        if os.environ.get("EXPVID_JUDGE_BASE_URL"):
            options["base_url"] = os.environ["EXPVID_JUDGE_BASE_URL"]
        if os.environ.get("EXPVID_JUDGE_API_KEY_ENV"):
            options["api_key_env"] = os.environ["EXPVID_JUDGE_API_KEY_ENV"]
        _judges[key] = _suite(package).build_judge(spec, options)
    return _judges[key]


@metric
def expvid_task_scores() -> Metric:
    """expvid's task scores (0-100, `score_group` over the items' points), one value per task."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        from expvid.scoring import score_group

        items = [item_score_of(sample.score.metadata) for sample in scores if sample.score.metadata]
        if not items:
            return {}
        group = score_group(items, n_boot=0)
        return {task: float(value.score) for task, value in group.tasks.items()}

    return compute


def _answer_text(extracted: Any) -> str | None:
    """What the suite read from the reply, as Inspect's `Score.answer` (text; JSON for lists)."""
    if extracted is None or isinstance(extracted, str):
        return extracted
    return json.dumps(extracted, default=str)


@scorer(metrics=[expvid_task_scores()], name=SCORER)
def expvid_scorer(package: str, judge: str | None = None) -> Scorer:
    """The suite's own reading of a reply: extraction, its judge where one decides, its score."""

    async def score(state: TaskState, target: Target) -> Score:
        suite = _suite(package)
        item = _items(package)[str(state.sample_id)]
        text = state.output.completion if state.output is not None and state.output.choices else None
        extraction = suite.extract(text, item)
        judgment = None
        if suite.needs_judge(item, extraction):
            judgment = await _judge(package, judge).judge(item, extraction, text)
        points = suite.score(item, extraction, judgment)
        explanation = points.status.value
        if judgment is not None:
            explanation += f"; judge {judgment.judge}: " + (judgment.error or f"score {judgment.score}")
        return Score(
            value=points.earned / points.possible if points.possible else 0.0,
            answer=_answer_text(points.extracted),
            explanation=explanation,
            metadata=score_record(points),
        )

    return score
