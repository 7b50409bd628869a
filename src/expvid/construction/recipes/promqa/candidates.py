"""The candidate directory of the recipe, in ProMQA's release layout plus expvid's sidecars.

    examples.json        ProMQA release records: the example, `generation` (prompt, raw response,
                         model, template, pairs with the kept one first), the kept `question` and
                         its `answers` tagged "machine". `expvid eval --suite promqa` runs it as is.
    graphs.json          activity id -> {name, steps, edges} (the release's recipe file)
    videos/<id>.mp4      the recordings (hard links): the release layout, and what the platform's
                         player seeks in
    clips/<hash>.mp4     the prefix clips video_{0:k}, cut frame-exactly at [0, end of the prefix)
    provenance.jsonl     one line per item: identity, source window, clip, the draft (model, prompt
                         id and hash, request hash, attempts, raw reply), template and generator
    build_report.{json,md}, .build/ (state: response cache, failed calls)

Identity (the contract of `docs/build.md`, with ProMQA's own ids): the release id `question_id` is
`<recording>_<step>_<type>` (ProMQA's), with `.<template>.<model>` appended when a build asks several
templates or generators; `uid` = `item` = `<type>/<question_id>`; `experiment_id` = the recording;
`draft_key` = `<type>|<recording>|<step>|<prefix end>|<template>|<model>`; `content_sha256` = sha256 of
the canonical JSON of {question, options: null, answer: answers, clip: the clip's content address}.
Clip names are content addresses: sha256 of the recording's bytes and the clip's span. Nothing here
depends on an item's position or on file times.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from expvid.construction.state import write_atomic

EXAMPLES_FILE = "examples.json"
GRAPHS_FILE = "graphs.json"
PROVENANCE_FILE = "provenance.jsonl"
CLIP_DIR = "clips"
VIDEO_DIR = "videos"
FORMAT = "promqa-candidates/1"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", model).strip("-") or "model"


def item_question_id(base: str, template: str, model: str, *, variants: bool) -> str:
    return f"{base}.{template}.{slug(model)}" if variants else base


def clip_address(video_sha256: str, end: float) -> str:
    """Content address of the prefix clip [0, end) of a recording with these bytes."""
    return sha256(f"promqa-prefix|{video_sha256}|0.000-{end:.6f}")[:20]


def clip_path(address: str) -> str:
    return f"{CLIP_DIR}/{address}.mp4"


def draft_key(kind: str, recording: str, step_id: int, end: float, template: str, model: str) -> str:
    return f"{kind}|{recording}|{step_id}|{end:.3f}|{template}|{model}"


def content_sha256(question: str, answers: list[str], clip: str) -> str:
    return sha256(canonical({"question": question, "options": None, "answer": answers, "clip": clip}))


def write_json(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, indent=4, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def read_provenance(root: Path) -> dict[str, dict[str, Any]]:
    """question_id -> provenance line (for the platform importer and the tables)."""
    path = root / PROVENANCE_FILE
    rows: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[str(row.get("question_id"))] = row
    return rows
