"""Candidate directories of a campaign, batch after batch, made from the test fixture's directory.

`with_uids` turns a directory into what `expvid build` writes since item identities are stable:
experiment-namespaced string ids, and one provenance line per item with `uid` (= `<task>/<id>`),
`experiment_id`, `draft_key` and `content_sha256` (of what a reviewer sees: the record's visible
fields and the clip's bytes). The other helpers make the next batch the way a campaign does:
re-draft an item, drop one, exclude an experiment (the curation report says so), add an experiment,
move the folder and rename its clip files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from expvid.platform.services.tasks import TASKS, annotation_file


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def records(root: Path) -> dict[str, dict[str, Any]]:
    """ "<task>/<id>" -> record, over every annotation file."""
    found = {}
    for task in TASKS:
        for record in read_jsonl(annotation_file(root, task)):
            found[f"{task}/{record['id']}"] = record
    return found


def content_hash(root: Path, record: dict[str, Any]) -> str:
    visible = {k: record.get(k) for k in ("question", "options", "answer", "asr_caption", "category")}
    clip = hashlib.sha256((root / record["video_path"]).read_bytes()).hexdigest()
    return hashlib.sha256(json.dumps([visible, clip], sort_keys=True).encode()).hexdigest()


def _rewrite(root: Path, change: Any) -> None:
    """Apply `change(task, records) -> records` to every annotation file."""
    for task in TASKS:
        path = annotation_file(root, task)
        if path.is_file():
            write_jsonl(path, change(task, read_jsonl(path)))


def restamp(root: Path) -> None:
    """Recompute every provenance line's `content_sha256` (after records or clips changed)."""
    by_key = records(root)
    lines = [line for line in read_jsonl(root / "provenance.jsonl") if line["item"] in by_key]
    for line in lines:
        line["content_sha256"] = content_hash(root, by_key[line["item"]])
    write_jsonl(root / "provenance.jsonl", lines)


def with_uids(source: Path, target: Path) -> Path:
    """A copy of `source` with stable, experiment-namespaced ids and full provenance."""
    shutil.copytree(source, target)
    renamed: dict[str, str] = {}

    def rename(task: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            new_id = f"{row['video_id']}-{task[:4]}{row['id']}"
            renamed[f"{task}/{row['id']}"] = f"{task}/{new_id}"
            row["id"] = new_id
        return rows

    _rewrite(target, rename)
    old = {line["item"]: line for line in read_jsonl(target / "provenance.jsonl")}
    lines = []
    for old_key, new_key in renamed.items():
        task = new_key.split("/", 1)[0]
        record = records(target)[new_key]
        line = {**old.get(old_key, {"task": task, "video_id": record["video_id"]}), "item": new_key}
        line.update(uid=new_key, experiment_id=record["video_id"], draft_key=f"{task}:{old_key}")
        lines.append(line)
    write_jsonl(target / "provenance.jsonl", lines)
    segments = read_jsonl(target / "segments.jsonl")
    for segment in segments:
        segment["items"] = [renamed[key] for key in segment["items"]]
    write_jsonl(target / "segments.jsonl", segments)
    restamp(target)
    return target


def next_batch(previous: Path, target: Path) -> Path:
    """The next build of the campaign, in a new folder (as if moved to another machine)."""
    shutil.copytree(previous, target)
    return target


def redraft(root: Path, release_key: str, **fields: Any) -> None:
    """The build drafted this item again: new field values, new content hash."""
    task, item_id = release_key.split("/", 1)

    def change(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            if name == task and str(row["id"]) == item_id:
                row.update(fields)
        return rows

    _rewrite(root, change)
    restamp(root)


def drop(root: Path, release_key: str) -> None:
    """The build no longer makes this item (its experiment stays)."""
    task, item_id = release_key.split("/", 1)
    _rewrite(root, lambda name, rows: [r for r in rows if not (name == task and str(r["id"]) == item_id)])
    segments = read_jsonl(root / "segments.jsonl")
    for segment in segments:
        segment["items"] = [k for k in segment["items"] if k != release_key]
    write_jsonl(root / "segments.jsonl", [s for s in segments if s["items"]])
    restamp(root)


def exclude_experiment(root: Path, video_id: str) -> None:
    """Curation review excluded an experiment: no items, and the curation report says why."""
    _rewrite(root, lambda _name, rows: [r for r in rows if r["video_id"] != video_id])
    write_jsonl(
        root / "segments.jsonl", [s for s in read_jsonl(root / "segments.jsonl") if s["video_id"] != video_id]
    )
    write_jsonl(
        root / "experiments.jsonl",
        [e for e in read_jsonl(root / "experiments.jsonl") if e["video_id"] != video_id],
    )
    entries = [{"video_id": e["video_id"], "kept": True} for e in read_jsonl(root / "experiments.jsonl")]
    entries.append({"video_id": video_id, "kept": False, "reasons": ["excluded by review"]})
    (root / "curation_report.json").write_text(json.dumps({"entries": entries}), encoding="utf-8")
    restamp(root)


def add_experiment(root: Path, like: str, video_id: str, discipline: str) -> list[str]:
    """A new experiment whose items copy those of `like`; returns their release keys."""
    added: list[str] = []

    def copy(task: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        extra = []
        for row in rows:
            if row["video_id"] == like and TASKS[task].level == 1:
                new = {**row, "id": str(row["id"]).replace(like, video_id, 1), "video_id": video_id, "category": discipline,
                       "question": row["question"].replace("?", f" in {video_id}?")}  # fmt: skip
                extra.append(new)
                added.append(f"{task}/{new['id']}")
        return rows + extra

    _rewrite(root, copy)
    lines = read_jsonl(root / "provenance.jsonl")
    for key in added:
        task = key.split("/", 1)[0]
        lines.append({"item": key, "task": task, "video_id": video_id, "uid": key, "experiment_id": video_id,
                      "draft_key": f"{task}:new", "drafts": [{"stage": "level1", "model": "deepseek-r1"}]})  # fmt: skip
    write_jsonl(root / "provenance.jsonl", lines)
    experiments = read_jsonl(root / "experiments.jsonl")
    experiments.append({"video_id": video_id, "title": f"Experiment {video_id}", "discipline": discipline})
    write_jsonl(root / "experiments.jsonl", experiments)
    restamp(root)
    return added


def rename_clips(root: Path) -> None:
    """Clip files renamed (same bytes): what a build did when file times changed."""
    moved: dict[str, str] = {}

    def rename(_task: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            old = row["video_path"]
            if old not in moved:
                new = str(Path(old).with_name("renamed_" + Path(old).name))
                shutil.copyfile(root / old, root / new)
                moved[old] = new
            row["video_path"] = moved[old]
        return rows

    _rewrite(root, rename)
    for old in moved:
        (root / old).unlink()
    segments = read_jsonl(root / "segments.jsonl")
    for segment in segments:
        segment["clip"] = moved.get(segment["clip"], segment["clip"])
    write_jsonl(root / "segments.jsonl", segments)
    experiments = read_jsonl(root / "experiments.jsonl")
    for experiment in experiments:
        if experiment.get("full_video"):
            experiment["full_video"] = moved.get(experiment["full_video"], experiment["full_video"])
    write_jsonl(root / "experiments.jsonl", experiments)
    restamp(root)
