"""Reading run files that are still being written: partial lines, appends, rewrites, bad records."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from expvid.schema import DataError, ExtractionStatus, ItemScore, Prediction
from expvid.view.outcome import Outcome, classify
from expvid.view.runfiles import RunFiles
from expvid.view.tail import JsonlTail


def _prediction(item: str, response: str | None = "\\boxed{A}", **extra: object) -> dict[str, object]:
    record: dict[str, object] = {
        "item_id": item,
        "task": item.split("/")[0],
        "model": "m",
        "response": response,
    }
    record.update(extra)
    return record


def _line(record: dict[str, object]) -> bytes:
    return (json.dumps(record) + "\n").encode()


def test_tail_leaves_a_partial_line_for_later(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    whole = _line(_prediction("tools/1"))
    path.write_bytes(_line(_prediction("tools/0")) + whole[:10])
    tail = JsonlTail(path)
    restarted, lines = tail.read_new()
    assert not restarted and [json.loads(line.text)["item_id"] for line in lines] == ["tools/0"]
    assert tail.pending_bytes == 10
    with path.open("ab") as handle:  # the writer finishes its line and writes another
        handle.write(whole[10:] + _line(_prediction("tools/2")))
    restarted, lines = tail.read_new()
    assert not restarted
    assert [(line.number, json.loads(line.text)["item_id"]) for line in lines] == [
        (2, "tools/1"),
        (3, "tools/2"),
    ]
    assert tail.pending_bytes == 0
    assert tail.read_new() == (False, [])


def test_tail_starts_over_when_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(_line(_prediction("a/0")) + _line(_prediction("a/1")))
    tail = JsonlTail(path)
    assert len(tail.read_new()[1]) == 2
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(_line(_prediction("b/0")))
    os.replace(replacement, path)  # another inode, shorter
    restarted, lines = tail.read_new()
    assert restarted and [json.loads(line.text)["item_id"] for line in lines] == ["b/0"]
    path.unlink()
    assert tail.read_new() == (True, [])


def _run_dir(root: Path) -> Path:
    root.mkdir()
    (root / "manifest.json").write_text(json.dumps({"suite": "expvid", "model": "m"}))
    return root


def test_run_files_last_line_wins_and_bad_lines_are_named(tmp_path: Path) -> None:
    root = _run_dir(tmp_path / "run")
    (root / "predictions.jsonl").write_bytes(
        _line(_prediction("tools/0", None, error="HTTP 500", error_kind="request"))
        + b"{not json\n"
        + _line({"task": "tools", "model": "m"})  # no item_id
        + _line(_prediction("tools/0", "\\boxed{C}"))  # the retry: last line wins
        + b'{"item_id": "tools/1", "ta'  # being written
    )
    files = RunFiles(root)
    assert set(files.predictions) == {("tools/0", 0)}
    assert files.predictions[("tools/0", 0)].model.response == "\\boxed{C}"
    assert files.predictions[("tools/0", 0)].line == 4
    assert files.prediction_lines == 4 and files.partial_tail
    assert files.problems[0].startswith("predictions.jsonl:2: record: Invalid JSON")
    assert files.problems[1].startswith("predictions.jsonl:3: item_id:")
    token = files.token()
    with (root / "predictions.jsonl").open("ab") as handle:
        handle.write(b'sk": "tools", "model": "m", "response": "B"}\n')
    assert files.token() != token and files.refresh()
    assert ("tools/1", 0) in files.predictions and not files.partial_tail
    assert not files.refresh()  # nothing new


def test_run_files_keep_fields_the_schema_does_not_know(tmp_path: Path) -> None:
    root = _run_dir(tmp_path / "run")
    manifest = {"suite": "expvid", "model": "m", "gpu": {"name": "H100", "count": 8}}
    (root / "manifest.json").write_text(json.dumps(manifest))
    (root / "predictions.jsonl").write_bytes(_line(_prediction("tools/0", future_field=[1, 2])))
    files = RunFiles(root)
    assert files.manifest is not None and files.manifest_raw["gpu"] == {"name": "H100", "count": 8}
    assert files.predictions[("tools/0", 0)].raw["future_field"] == [1, 2]


def test_not_a_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a run directory"):
        RunFiles(tmp_path)
    with pytest.raises(DataError, match="no such run directory"):
        RunFiles(tmp_path / "missing")


def _score(status: ExtractionStatus, earned: float, possible: float = 1.0, **extra: object) -> ItemScore:
    return ItemScore(item_id="x/0", task="x", status=status, earned=earned, possible=possible, **extra)  # type: ignore[arg-type]


def test_outcomes_keep_failures_apart() -> None:
    ok = Prediction(item_id="x/0", task="x", model="m", response="\\boxed{A}")
    failed = Prediction(item_id="x/0", task="x", model="m", error="timed out", error_kind="timeout")  # type: ignore[arg-type]
    cut = ok.model_copy(update={"finish_reason": "length"})
    scored_at = (ok.created_at + timedelta(seconds=5)).timestamp()

    def outcome(pred: Prediction | None, score: ItemScore | None, **kw: object) -> Outcome:
        return classify(pred, score, scored_at=scored_at, **kw).outcome  # type: ignore[arg-type]

    assert outcome(ok, _score(ExtractionStatus.OK, 1)) is Outcome.CORRECT
    assert outcome(ok, _score(ExtractionStatus.OK, 0)) is Outcome.WRONG
    assert outcome(ok, _score(ExtractionStatus.OK, 1, 3)) is Outcome.PARTIAL
    assert outcome(ok, _score(ExtractionStatus.UNPARSEABLE, 0)) is Outcome.UNPARSEABLE
    assert outcome(ok, _score(ExtractionStatus.OK, 0, judge_error="HTTP 503")) is Outcome.JUDGE_FAILED
    verdict = classify(failed, _score(ExtractionStatus.FAILED, 0), scored_at=scored_at)
    assert verdict.outcome is Outcome.FAILED and verdict.error_kind == "timeout"
    assert outcome(ok, None) is Outcome.UNSCORED
    assert outcome(None, None) is Outcome.PENDING
    assert outcome(None, None, selected=False) is Outcome.ABSENT
    # A failure retried after the last scoring pass is not shown with the old (failed) score.
    assert outcome(ok, _score(ExtractionStatus.FAILED, 0)) is Outcome.UNSCORED
    later = ok.model_copy(update={"created_at": datetime.now(UTC) + timedelta(hours=1)})
    assert outcome(later, _score(ExtractionStatus.OK, 1)) is Outcome.UNSCORED
    truncated = classify(cut, _score(ExtractionStatus.OK, 0), scored_at=scored_at)
    assert truncated.outcome is Outcome.WRONG and truncated.truncated and truncated.is_failure
    legacy = ok.model_copy(update={"meta": {"finish_reason": "length"}})  # older runs kept it in meta
    assert classify(legacy, _score(ExtractionStatus.OK, 1), scored_at=scored_at).truncated
