"""What an exported lmms-eval task package calls at run time: the suite's prompts, extraction and metrics.

The generated `utils.py` is a thin shim over these functions, naming its suite and the settings it
was exported with, so an lmms-eval run and an `expvid eval` run ask the same question (the suite's
`prompt_text`), read the answer the same way (its `extract`, never a guess) and score it the same
way (its `score`, and `score_group` for the task score on expvid's 0-100 scale). Each document's
result carries the expvid item id, so `expvid score --from lmms-eval` can match lmms-eval's logged
samples to items one by one. Packages exported before suites were named in them are ExpVid's.

lmms-eval calls `process_results` synchronously; answers that need a judge get the suite's offline
judge (labelled offline) unless `EXPVID_JUDGE` names a backend spec for an LLM judge
(`EXPVID_JUDGE_BASE_URL`, `EXPVID_JUDGE_API_KEY_ENV` as in `expvid eval`).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

from expvid.schema import ExtractionStatus, ImagesRef, Item, ItemScore, VideoRef
from expvid.suites.defaults import DEFAULT_SUITE

METRIC = "expvid_score"
_judges: dict[tuple[str, ...], Any] = {}
_suites: dict[str, Any] = {}
_lock = threading.Lock()


def _suite(name: str, settings: dict[str, Any] | None) -> Any:
    key = json.dumps([name, settings or {}], sort_keys=True, default=str)
    with _lock:
        if key not in _suites:
            from expvid.suites.registry import get_suite

            _suites[key] = get_suite(name, settings)
        return _suites[key]


def data_root(default: str, relative: Path | None = None) -> Path:
    """Where the media are: `EXPVID_DATA_ROOT` if set; else `relative` (the release folder where it
    was relative to the package when exported) when it is there; else the root the package was
    exported from."""
    configured = os.environ.get("EXPVID_DATA_ROOT")
    if configured:
        return Path(configured)
    if relative is not None and relative.is_dir():
        return relative.resolve()
    return Path(default)


def doc_to_item(
    task: str,
    doc: dict[str, Any],
    root: Path,
    suite: str = DEFAULT_SUITE,
    settings: dict[str, Any] | None = None,
) -> Item:
    """An lmms-eval document (a row of the task's release file, as `datasets` returns it) as an item."""
    item: Item = _suite(suite, settings).item_from_record(_record(doc), task, root)
    return item


def _record(doc: dict[str, Any]) -> dict[str, Any]:
    """A `datasets` row as the release record it was read from. Through a Hub export's card,
    `options` is a struct of every letter the task uses (`expvid.hub.features`), null where this
    item has fewer options: those letters are not options of the item."""
    record = dict(doc)
    options = record.get("options")
    if isinstance(options, dict):
        record["options"] = {letter: text for letter, text in options.items() if text is not None}
    return record


def task_of(doc: dict[str, Any], suite: str, settings: dict[str, Any] | None = None) -> str | None:
    """The task of a document of a release file that holds several (`process_docs` keeps one task's)."""
    found: str | None = _suite(suite, settings).task_of(_record(doc))
    return found


def doc_to_visual(
    doc: dict[str, Any], root: Path, task: str | None = None, suite: str = DEFAULT_SUITE,
    settings: dict[str, Any] | None = None,
) -> list[str]:  # fmt: skip
    """The item's media files: lmms-eval video models sample their own frames from a video."""
    if task is None:  # packages written for ExpVid only name the video by its path in the record
        paths = [str(root / str(doc["video_path"]))]
    else:
        media = doc_to_item(task, doc, root, suite, settings).media
        paths = (
            [media.path]
            if isinstance(media, VideoRef)
            else list(media.paths)
            if isinstance(media, ImagesRef)
            else []
        )
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        raise FileNotFoundError(
            f"media not found: {missing[0]} (set EXPVID_DATA_ROOT to the benchmark's folder)"
        )
    return paths


def doc_to_text(
    task: str, doc: dict[str, Any], root: Path, kwargs: dict[str, Any] | None,
    suite: str = DEFAULT_SUITE, settings: dict[str, Any] | None = None,
) -> str:  # fmt: skip
    """The suite's prompt; `pre_prompt` / `post_prompt` from `lmms_eval_specific_kwargs` wrap it (empty by default)."""
    kwargs = kwargs or {}
    if kwargs.get("with_asr") and suite == DEFAULT_SUITE:  # packages exported before settings were recorded
        settings = {**(settings or {}), "with_asr": True}
    prompt = _suite(suite, settings).prompt_text(doc_to_item(task, doc, root, suite, settings))
    return f"{kwargs.get('pre_prompt', '')}{prompt}{kwargs.get('post_prompt', '')}"


def doc_to_target(
    task: str,
    doc: dict[str, Any],
    root: Path,
    suite: str = DEFAULT_SUITE,
    settings: dict[str, Any] | None = None,
) -> str:
    item = doc_to_item(task, doc, root, suite, settings)
    answer = item.answer
    return ", ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)


def process_results(
    task: str, doc: dict[str, Any], results: list[Any], root: Path,
    suite: str = DEFAULT_SUITE, settings: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Score one document's response with the suite's extraction and metric; the value keeps what is needed to aggregate."""
    the_suite = _suite(suite, settings)
    item = doc_to_item(task, doc, root, suite, settings)
    response = results[0] if results else None
    if isinstance(response, list):  # some models return one list per request
        response = response[0] if response else None
    text = response if isinstance(response, str) else None
    extraction = the_suite.extract(text, item)
    judgment = None
    if the_suite.needs_judge(item, extraction):
        judgment = _run(_judge(suite, settings).judge(item, extraction, text))
    return {METRIC: score_record(the_suite.score(item, extraction, judgment))}


def score_record(score: ItemScore) -> dict[str, Any]:
    """An item's score as another tool logs it (JSON): its expvid id, points, status and reading."""
    return {
        "expvid_id": score.item_id,
        "task": score.task,
        "earned": score.earned,
        "possible": score.possible,
        "status": score.status.value,
        "extracted": score.extracted,
        "discipline": score.discipline,
        "video_id": score.video_id,
        "judge_error": score.judge_error,
    }


def item_score_of(record: dict[str, Any]) -> ItemScore:
    """The `ItemScore` a `score_record` was made from."""
    return ItemScore(
        item_id=record["expvid_id"],
        task=record["task"],
        status=ExtractionStatus(record["status"]),
        extracted=record.get("extracted"),
        earned=float(record["earned"]),
        possible=float(record["possible"]),
        discipline=record.get("discipline"),
        video_id=record.get("video_id"),
        judge_error=record.get("judge_error"),
    )


def aggregate(values: list[dict[str, Any]]) -> float:
    """The task score exactly as expvid computes it (0-100): `score_group` over the items' scores."""
    from expvid.scoring import score_group

    scores = [item_score_of(value) for value in values]
    if not scores:
        return float("nan")
    group = score_group(scores, n_boot=0)
    tasks = list(group.tasks.values())
    if len(tasks) != 1:
        raise ValueError(f"one aggregation call got items of {len(tasks)} tasks")
    return float(tasks[0].score)


def _judge(suite: str, settings: dict[str, Any] | None) -> Any:
    spec, base_url, key_env = (
        os.environ.get("EXPVID_JUDGE"),
        os.environ.get("EXPVID_JUDGE_BASE_URL"),
        os.environ.get("EXPVID_JUDGE_API_KEY_ENV"),
    )
    key = (
        suite,
        json.dumps(settings or {}, sort_keys=True, default=str),
        spec or "",
        base_url or "",
        key_env or "",
    )
    the_suite = _suite(suite, settings)
    with _lock:
        if key not in _judges:
            options: dict[str, Any] = {}
            if base_url:
                options["base_url"] = base_url
            if key_env:
                options["api_key_env"] = key_env
            _judges[key] = the_suite.build_judge(spec, options)
        return _judges[key]


def _run(coroutine: Any) -> Any:
    """Run a judge coroutine from lmms-eval's synchronous code, even if an event loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
