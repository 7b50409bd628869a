"""What an exported lmms-eval task package calls at run time: expvid's prompts, extraction and metrics.

The generated `utils.py` is a thin shim over these functions, so an lmms-eval run and an `expvid eval`
run ask the same question (the F.4 prompt built by `expvid.suites.expvid_prompts`), read the answer
the same way (`expvid.scoring.extract_answer`, never a guess) and score it the same way
(`score_item`, and `score_group` for the task score: accuracy, Jaccard, per-blank accuracy, on
expvid's 0-100 scale). Each document's result carries the expvid item id, so `expvid score --from
lmms-eval` can match lmms-eval's logged samples to items one by one.

lmms-eval calls `process_results` synchronously; Level-3 blanks need a judge, which is expvid's
offline judge (normalised match + MiniLM, labelled offline) unless `EXPVID_JUDGE` names a backend
spec for an LLM judge (`EXPVID_JUDGE_BASE_URL`, `EXPVID_JUDGE_API_KEY_ENV` as in `expvid eval`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from expvid.schema import ExtractionStatus, Item, ItemScore

METRIC = "expvid_score"
_judges: dict[tuple[str | None, str | None, str | None], Any] = {}
_lock = threading.Lock()


def data_root(default: str, relative: Path | None = None) -> Path:
    """Where the videos are: `EXPVID_DATA_ROOT` if set; else `relative` (the benchmark folder where it
    was relative to the package when exported) when it is there; else the root the package was
    exported from."""
    configured = os.environ.get("EXPVID_DATA_ROOT")
    if configured:
        return Path(configured)
    if relative is not None and relative.is_dir():
        return relative.resolve()
    return Path(default)


def doc_to_item(task: str, doc: dict[str, Any], root: Path) -> Item:
    """An lmms-eval document (a row of the task's JSONL, as `datasets` returns it) as an expvid item."""
    from expvid.suites.expvid_suite import item_from_record

    record = dict(doc)
    options = record.get("options")
    if isinstance(options, dict):  # a struct column fills absent letters with None
        record["options"] = {k: v for k, v in options.items() if v is not None}
    elif options is None:
        record.pop("options", None)
    if record.get("asr_caption") is None:
        record["asr_caption"] = ""
    return item_from_record(task, record, root)


def doc_to_visual(doc: dict[str, Any], root: Path) -> list[str]:
    """The item's video file: lmms-eval video models sample their own frames from it."""
    path = root / str(doc["video_path"])
    if not path.is_file():
        raise FileNotFoundError(f"video not found: {path} (set EXPVID_DATA_ROOT to the benchmark's folder)")
    return [str(path)]


def doc_to_text(task: str, doc: dict[str, Any], root: Path, kwargs: dict[str, Any] | None) -> str:
    """The F.4 prompt; `pre_prompt` / `post_prompt` from `lmms_eval_specific_kwargs` wrap it (empty by default)."""
    from expvid.suites.expvid_prompts import build_prompt

    kwargs = kwargs or {}
    prompt = build_prompt(doc_to_item(task, doc, root), with_asr=bool(kwargs.get("with_asr", False)))
    return f"{kwargs.get('pre_prompt', '')}{prompt}{kwargs.get('post_prompt', '')}"


def doc_to_target(task: str, doc: dict[str, Any], root: Path) -> str:
    item = doc_to_item(task, doc, root)
    answer = item.answer
    return ", ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)


def process_results(task: str, doc: dict[str, Any], results: list[Any], root: Path) -> dict[str, Any]:
    """Score one document's response with expvid's extraction and metric; the value keeps what is needed to aggregate."""
    from expvid.scoring import extract_answer, needs_judge, score_item

    item = doc_to_item(task, doc, root)
    response = results[0] if results else None
    if isinstance(response, list):  # some models return one list per request
        response = response[0] if response else None
    text = response if isinstance(response, str) else None
    extraction = extract_answer(text, item)
    judgment = None
    if needs_judge(item, extraction):
        judgment = _run(_judge().judge(item, extraction, text))
    score = score_item(item, extraction, judgment)
    value = {
        "expvid_id": item.id,
        "task": item.task,
        "earned": score.earned,
        "possible": score.possible,
        "status": score.status.value,
        "extracted": score.extracted,
        "discipline": score.discipline,
        "video_id": score.video_id,
        "judge_error": score.judge_error,
    }
    return {METRIC: value}


def aggregate(values: list[dict[str, Any]]) -> float:
    """The task score exactly as expvid computes it (0-100): `score_group` over the items' scores."""
    from expvid.scoring import score_group

    scores = [
        ItemScore(
            item_id=v["expvid_id"],
            task=v["task"],
            status=ExtractionStatus(v["status"]),
            extracted=v.get("extracted"),
            earned=float(v["earned"]),
            possible=float(v["possible"]),
            discipline=v.get("discipline"),
            video_id=v.get("video_id"),
            judge_error=v.get("judge_error"),
        )
        for v in values
    ]
    if not scores:
        return float("nan")
    group = score_group(scores, n_boot=0)
    tasks = list(group.tasks.values())
    if len(tasks) != 1:
        raise ValueError(f"one aggregation call got items of {len(tasks)} tasks")
    return float(tasks[0].score)


def _judge() -> Any:
    key = (
        os.environ.get("EXPVID_JUDGE"),
        os.environ.get("EXPVID_JUDGE_BASE_URL"),
        os.environ.get("EXPVID_JUDGE_API_KEY_ENV"),
    )
    with _lock:
        if key not in _judges:
            from expvid.suites.expvid_eval import build_blank_judge

            options: dict[str, Any] = {}
            if key[1]:
                options["base_url"] = key[1]
            if key[2]:
                options["api_key_env"] = key[2]
            _judges[key] = build_blank_judge(key[0], options)
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
