"""Everything about one item, for every run side by side: what the model saw, said and scored.

Each value says where it comes from. The prompt is the one recorded with the prediction (or, for
runs that did not record it, rebuilt by the suite and marked so). The extraction is shown twice:
what the last scoring pass recorded, and the rule that reads it (extraction is re-run on the
recorded response, which is deterministic and writes nothing). Judge verdicts come per blank with
the judge's raw reply. Fields this page does not know are listed as they were written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from expvid.schema import Item, ItemScore, Judgment, Prediction, VideoRef
from expvid.scoring.extraction.reasoning import split_reasoning
from expvid.view.display import answer_text, extra_fields, gold_json, gold_text, jsonable, parse_judge_raw
from expvid.view.rows import verdict_of
from expvid.view.runfiles import Record
from expvid.view.session import RunView, ViewSession

#: Frames of (run, sample) as the page gets them: a URL to ask (served) or the frames (export).
FramesRef = Callable[[RunView, str, int], dict[str, Any]]

_PREDICTION_SHOWN = {
    "item_id", "task", "model", "response", "reasoning", "error", "error_kind", "frames", "n_images",
    "latency_s", "usage", "cached", "request_hash", "sample", "finish_reason", "refusal", "sent",
    "created_at", "meta",
}  # fmt: skip
_META_SHOWN = {"prompt", "prompt_sha256", "finish_reason", "frames_from_cache", "status"}
_JUDGMENT_SHOWN = {
    "item_id", "task", "judge", "verdicts", "score", "raw", "error", "cached", "sample", "input_sha256",
    "created_at",
}  # fmt: skip
_SCORE_SHOWN = {
    "item_id", "task", "status", "extracted", "earned", "possible", "discipline", "video_id", "judge_error",
    "sample",
}  # fmt: skip


def item_detail(
    session: ViewSession, item_id: str, frames: FramesRef, video_url: Callable[[str], str | None]
) -> dict[str, Any]:
    item = session.item(item_id)
    samples = session.samples(item_id)
    document: dict[str, Any] = {
        "id": item_id,
        "version": session.version,
        "found": item is not None,
        "samples": samples,
        "runs": [
            {
                "key": run.key,
                "label": run.label,
                "spec": run.spec,
                "samples": [_sample(run, item, item_id, sample, frames) for sample in samples],
            }
            for run in session.runs
        ],
    }
    if item is None:
        document["note"] = (
            "this item is not in the dataset the viewer found: no question, gold answer or video"
        )
        return document
    spec = next(
        (run.dataset.tasks[item.task] for run in session.runs if item.task in run.dataset.tasks), None
    )
    document.update(
        {
            "task": item.task,
            "task_label": spec.paper_name if spec is not None else item.task,
            "level": item.level,
            "discipline": item.discipline,
            "source_id": item.source_id,
            "answer_type": item.answer_type.value,
            "question": item.question,
            "options": item.options,
            "gold": gold_json(item),
            "gold_text": gold_text(item),
            "context": item.context,
            "item_meta": jsonable(item.meta),
            "media": _media(item, video_url(item_id)),
        }
    )
    return document


def _media(item: Item, url: str | None) -> dict[str, Any] | None:
    media = item.media
    if media is None:
        return None
    if isinstance(media, VideoRef):
        return {
            "kind": "video",
            "name": media.path.rsplit("/", 1)[-1],
            "start": media.start,
            "end": media.end,
            "url": url,
        }
    return {"kind": "images", "names": [p.rsplit("/", 1)[-1] for p in media.paths]}


def _sample(run: RunView, item: Item | None, item_id: str, sample: int, frames: FramesRef) -> dict[str, Any]:
    verdict, prediction, score = verdict_of(run, item_id, sample)
    record = run.files.predictions.get((item_id, sample))
    judgment = run.files.judgments.get((item_id, sample))
    score_record = run.files.item_scores.get((item_id, sample))
    out: dict[str, Any] = {
        "sample": sample,
        "outcome": verdict.outcome.value,
        "why": verdict.why,
        "truncated": verdict.truncated,
        "refusal": verdict.refusal,
        "prediction": None
        if record is None or prediction is None
        else _prediction(run, item, record.raw, prediction, record.line),
        "score": None if score_record is None or score is None else _score(score_record.raw, score),
        "judgment": None if judgment is None else _judgment(judgment, item),
        "extraction": _extraction(run, item, prediction, score),
    }
    blanks = out["judgment"].get("blanks") if out["judgment"] else None
    if blanks:
        read = out["extraction"].get("recorded") or out["extraction"].get("reread") or {}
        value = read.get("value")
        values: list[Any] = value if isinstance(value, list) else []
        for row in blanks:
            n = row["blank"] - 1
            row["predicted"] = values[n] if n < len(values) else None
    if prediction is not None or item is not None:
        out["frames"] = frames(run, item_id, sample)
    return out


def _prediction(
    run: RunView, item: Item | None, raw: dict[str, Any], pred: Prediction, line: int
) -> dict[str, Any]:
    meta = pred.meta
    prompt = meta.get("prompt") if isinstance(meta.get("prompt"), str) else None
    prompt_source = "recorded"
    if prompt is None and item is not None and run.dataset.suite is not None:
        try:
            prompt = run.dataset.suite.prompt_text(item)
            prompt_source = "rebuilt by the suite (this run did not record its prompts)"
        except (ValueError, TypeError):
            prompt = None
    answer, inline_reasoning = split_reasoning(pred.response) if pred.response is not None else (None, None)
    usage = pred.usage
    return {
        "line": line,
        "model": pred.model,
        "prompt": prompt,
        "prompt_source": prompt_source if prompt is not None else "not recorded",
        "prompt_sha256": meta.get("prompt_sha256"),
        "response": pred.response,
        "answer_text": answer,
        "inline_reasoning": inline_reasoning,
        "reasoning": pred.reasoning,
        "refusal": pred.refusal,
        "error": pred.error,
        "error_kind": pred.error_kind.value if pred.error_kind is not None else None,
        "http_status": meta.get("status"),
        "stats": {
            "latency_s": pred.latency_s,
            "prompt_tokens": usage.prompt_tokens if usage else None,
            "completion_tokens": usage.completion_tokens if usage else None,
            "reasoning_tokens": usage.reasoning_tokens if usage else None,
            "cached": pred.cached,
            "finish_reason": pred.stop_reason,
            "truncated": pred.truncated,
            "n_images": pred.n_images,
            "frames_from_cache": meta.get("frames_from_cache"),
            "request_hash": pred.request_hash,
            "created_at": pred.created_at.isoformat(),
        },
        "sent": jsonable(pred.sent),
        "recorded_frames": [{"index": f.index, "time": f.time} for f in pred.frames],
        "extra": extra_fields(raw, _PREDICTION_SHOWN),
        "meta_extra": extra_fields(meta, _META_SHOWN),
    }


def _score(raw: dict[str, Any], score: ItemScore) -> dict[str, Any]:
    return {
        "status": score.status.value,
        "extracted": jsonable(score.extracted),
        "extracted_text": answer_text(score.extracted),
        "earned": score.earned,
        "possible": score.possible,
        "judge_error": score.judge_error,
        "extra": extra_fields(raw, _SCORE_SHOWN),
    }


def _judgment(record: Record[Judgment], item: Item | None) -> dict[str, Any]:
    judgment = record.model
    out: dict[str, Any] = {
        "judge": judgment.judge,
        "verdicts": judgment.verdicts,
        "score": judgment.score,
        "raw": judgment.raw,
        "raw_json": jsonable(parse_judge_raw(judgment.raw)),
        "error": judgment.error,
        "cached": judgment.cached,
        "input_sha256": judgment.input_sha256,
        "line": record.line,
        "extra": extra_fields(record.raw, _JUDGMENT_SHOWN),
    }
    if item is not None and item.n_blanks and judgment.verdicts is not None:
        out["blanks"] = [
            {
                "blank": n + 1,
                "gold": gold,
                "verdict": judgment.verdicts[n] if n < len(judgment.verdicts) else None,
            }
            for n, gold in enumerate(item.answer)  # type: ignore[arg-type]
        ]
    return out


def _extraction(
    run: RunView, item: Item | None, pred: Prediction | None, score: ItemScore | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if score is not None:
        out["recorded"] = {"status": score.status.value, "value": jsonable(score.extracted)}
    if item is not None and pred is not None and run.dataset.suite is not None:
        extraction = run.dataset.suite.extract(pred.response if pred.ok else None, item)
        out["reread"] = {
            "status": extraction.status.value,
            "value": jsonable(extraction.value),
            "text": answer_text(extraction.value),
            "rule": extraction.rule,
            "detail": extraction.detail,
        }
        if score is not None and jsonable(score.extracted) != jsonable(extraction.value):
            out["differs"] = True
    return out
