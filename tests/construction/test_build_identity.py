"""An item keeps its identity from draft to release, whatever else the campaign does.

Issue 18 measured on the sample: one more experiment re-lettered 247 of 328 items and re-paid 825 blind
calls; an experiment whose id sorts first renamed every item; `touch` re-cut every clip. Here the
same things happen to a small campaign against the scripted lab on a loopback server, and each item's
id, answer letter, options, clip file and content hash are compared, along with every request sent.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from build_helpers import bodies, build_config, read_jsonl, run_build, subset
from build_responder import ScriptedLab

from expvid.construction import estimate_candidates
from expvid.fakes.models.server import LoopbackServer
from expvid.suites.expvid_suite import load_expvid

FIRST, SECOND, SORTS_FIRST = "62517", "63090", "61842"


def snapshot(out: Path) -> dict[str, dict[str, Any]]:
    """uid -> what identifies the item and what a reviewer sees (and the clip file's inode)."""
    provenance = {line["uid"]: line for line in read_jsonl(out / "provenance.jsonl")}
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((out / "annotations").rglob("*.jsonl")):
        for record in read_jsonl(path):
            uid = f"{path.stem}/{record['id']}"
            found[uid] = {
                "record": record,
                "content_sha256": provenance[uid]["content_sha256"],
                "draft_key": provenance[uid]["draft_key"],
                "inode": (out / record["video_path"]).stat().st_ino,
            }
    return found


def _build(sources: Path, out: Path, **overrides: Any) -> tuple[dict[str, Any], list[str]]:
    with LoopbackServer(ScriptedLab()) as server:
        report = run_build(sources, out, server, blind_samples=1, **overrides)
        return report, bodies(server)


def _copy(sample_sources: Path, target: Path, video_ids: list[str]) -> Path:
    """Copies (times preserved) of the sample's experiments: this test touches them."""
    for video_id in video_ids:
        shutil.copytree(sample_sources / video_id, target / video_id)
    return target


def test_items_keep_id_letter_and_clip_through_adding_excluding_and_touching(sample_sources, tmp_path):
    sources = _copy(sample_sources, tmp_path / "sources", [FIRST, SECOND])
    out = tmp_path / "campaign"
    first, first_bodies = _build(sources, out)
    batch1 = snapshot(out)
    assert first["failed_units"] == [] and len(batch1) == first["total_items"] > 50
    # Ids are strings namespaced by the experiment; the provenance names the same identity.
    for uid, entry in batch1.items():
        record = entry["record"]
        assert isinstance(record["id"], str) and record["id"].startswith(f"{record['video_id']}-")
        assert entry["draft_key"].startswith(uid.split("/", 1)[0] + "|")

    # The experiment that sorts first, built on its own: the reference for its items and its cost.
    alone_sources = subset(sample_sources, tmp_path / "alone_sources", [SORTS_FIRST])
    alone_report, alone_bodies = _build(alone_sources, tmp_path / "alone")
    alone = snapshot(tmp_path / "alone")

    # Batch 2: add it to the campaign.
    _copy(sample_sources, sources, [SORTS_FIRST])
    second, second_bodies = _build(sources, out)
    batch2 = snapshot(out)
    assert {uid: batch2[uid] for uid in batch1} == batch1  # nobody else's id, letter, options or clip moved
    assert {uid: batch2[uid]["record"] for uid in alone} == {uid: e["record"] for uid, e in alone.items()}
    assert set(batch2) == set(batch1) | set(alone)
    # Exactly the new experiment's calls were paid (the same ones a build of it alone pays), and no
    # request of batch 1 was sent again: its blind audit included.
    assert sorted(second_bodies) == sorted(alone_bodies)
    assert not set(second_bodies) & set(first_bodies)
    assert (
        second["phases"]["blind_audit"]["calls_sent"] == alone_report["phases"]["blind_audit"]["calls_sent"]
    )

    # Exclude a drafted experiment in curation.csv: its items go, nothing is asked, nothing else moves.
    review = out / "curation.csv"
    rows = list(csv.DictReader(review.open(encoding="utf-8")))
    for row in rows:
        if row["video_id"] == SECOND:
            row["review"] = "exclude"
    with review.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _, third_bodies = _build(sources, out)
    batch3 = snapshot(out)
    assert third_bodies == []
    assert batch3 == {uid: e for uid, e in batch2.items() if e["record"]["video_id"] != SECOND}

    # `touch` every source file (or copy the folder without its times): nothing is asked, cut or renamed.
    later = time.time() + 3600
    for path in sources.rglob("*"):
        if path.is_file():
            os.utime(path, (later, later))
    fourth, fourth_bodies = _build(sources, out)
    assert fourth_bodies == [] and fourth["clips"]["clips_cut"] == 0
    assert snapshot(out) == batch3

    # The finished build forecasts no blind call, and loads in the evaluator with string ids.
    with LoopbackServer(ScriptedLab()) as server:
        estimate = asyncio.run(estimate_candidates(build_config(sources, out, server, blind_samples=1)))
    assert estimate["stages"]["blind_audit"]["calls"] == 0
    assert estimate["total"]["calls"] == 0
    dataset = load_expvid(out, strict=True)
    assert {item.id for item in dataset.items} == set(batch3)


def test_redrafting_one_experiment_changes_only_its_items(sample_sources, tmp_path):
    sources = subset(sample_sources, tmp_path / "sources", [FIRST, SECOND])
    out = tmp_path / "campaign"
    _build(sources, out, levels=(3,))
    before = snapshot(out)
    report, sent = _build(sources, out, levels=(3,), redo=(f"level3:{SECOND}",))
    after = snapshot(out)
    # Only the re-drafted experiment's two Level-3 prompts went out (the lab answers the same, so its
    # items keep their ids and their blind audit comes from the cache); the other's were not asked.
    assert report["phases"]["level3"]["calls_sent"] == 2 and len(sent) == 2
    assert all(f"Title: {_title(sample_sources, SECOND)}" in body.replace("\\n", "\n") for body in sent)
    assert after == before
    # The redo is done once: a later run asks nothing.
    _, again = _build(sources, out, levels=(3,))
    assert again == []


def _title(sources: Path, video_id: str) -> str:
    return str(json.loads((sources / video_id / "meta.json").read_text())["title"])
