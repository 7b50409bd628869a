"""Benchmark: a campaign of about 400 experiments in two batches, from drafting to an evaluated release.

The experiments are replicates of the sample's six protocols (`campaign_sources.py`: own ids, titles,
narrations, 13 disciplines of at most 30), answered by the scripted lab of the tests on a loopback
server; the platform is a SQLite database driven through its services, as its pages do.

1. batch 1 (half of the experiments) is built and imported; two reviewers decide half of its items
   (one disagrees on every seventh);
2. batch 2 adds the other half, excludes one drafted experiment (curation.csv) and re-drafts another
   (`--redo level1:ID` against a lab that now drafts that experiment's MCQs with other distractors);
   it is built and imported;
3. the reviewers decide everything open, the adjudicator settles the disputes, the platform exports
   the release, and `expvid eval` (random baseline, 2 items per task) runs on it.

Printed: wall time, model calls and items of each step, the import report's outcomes, and the checks
of issue 18 (no decision lost, no reviewed item's id, letter or clip changed, no item dropped, no model
call paid twice except the re-drafted experiment's Level-1 prompts, every change in the import report).

Usage: python benchmarks/campaign.py [--experiments 390] [--blind-samples 1]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "campaign"
sys.path.insert(0, str(ROOT.parent / "tests" / "construction"))
sys.path.insert(0, str(ROOT))


def _base_videos() -> Path:
    sample = CACHE / "sample"
    if not (sample / "sources").is_dir():
        subprocess.run(
            [sys.executable, "-m", "expvid.cli.main", "sample", "make", str(sample)],
            check=True,
            capture_output=True,
        )
    videos = CACHE / "videos"
    videos.mkdir(parents=True, exist_ok=True)
    for folder in (sample / "sources").iterdir():
        target = videos / f"{folder.name}.mp4"
        if not target.exists():
            shutil.copyfile(folder / "video.mp4", target)
    return videos


def _records(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted((out / "annotations").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            found[f"{path.stem}/{record['id']}"] = record
    return found


def _review_csv(out: Path, video_id: str, value: str) -> None:
    path = out / "curation.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for row in rows:
        if row["video_id"] == video_id:
            row["review"] = value
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--experiments", type=int, default=390)
    parser.add_argument("--blind-samples", type=int, default=1)
    args = parser.parse_args()

    from build_helpers import bodies, build_config
    from build_responder import ScriptedLab
    from sqlalchemy import func, select

    from campaign_sources import campaign_scripts, write_experiment
    from expvid.construction import CurationSettings, build_candidates
    from expvid.fakes.models.server import LoopbackServer
    from expvid.platform.config import PasswordPolicy
    from expvid.platform.db.engine import Database
    from expvid.platform.db.migrate import upgrade_to_head
    from expvid.platform.db.models import Decision, Item
    from expvid.platform.security.passwords import Passwords
    from expvid.platform.services.adjudication import Resolution, resolve
    from expvid.platform.services.errors import SYSTEM, Actor
    from expvid.platform.services.exporter import export_verified
    from expvid.platform.services.importer import import_candidates
    from expvid.platform.services.review import DecisionInput, submit_decision
    from expvid.platform.services.users import add_user

    videos = _base_videos()
    work = CACHE / "run"
    shutil.rmtree(work, ignore_errors=True)
    every = work / "all_sources"
    pairs = campaign_scripts(args.experiments)
    for script, base in pairs:
        write_experiment(every, script, base, videos)
    ids = [script.video_id for script, _ in pairs]
    half = len(ids) // 2
    excluded, redrafted = ids[1], ids[2]
    sources = work / "sources"
    sources.mkdir(parents=True)
    out = work / "candidates"
    scripts = [script for script, _ in pairs]
    disciplines = sorted({script.discipline for script in scripts})

    url = f"sqlite:///{work / 'platform.sqlite3'}"
    upgrade_to_head(url)
    database = Database(url)
    passwords = Passwords(PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1))
    actors = {}
    with database.write() as db:
        for name, role in (("alice", "annotator"), ("bob", "annotator"), ("carol", "adjudicator")):
            user = add_user(
                db, passwords, username=name, password=f"pw-{name}-secret", role=role,
                disciplines=disciplines if role == "annotator" else [], actor=SYSTEM,
            )  # fmt: skip
            actors[name] = Actor(id=user.id, name=name, role=role, disciplines=tuple(user.disciplines or []))

    def build(lab: Any, **overrides: Any) -> tuple[dict[str, Any], list[str], float]:
        with LoopbackServer(lab) as server:
            started = time.perf_counter()
            config = build_config(
                sources, out, server, blind_samples=args.blind_samples, jobs=None, trim_slides=False,
                curation=CurationSettings(min_duration=60, max_duration=900, top_k=30), **overrides,
            )  # fmt: skip
            report = asyncio.run(build_candidates(config))
            return report, bodies(server), time.perf_counter() - started

    def decide(user: str, item: Any, verdict: str) -> None:
        with database.read() as db:
            mine = db.scalar(
                select(Decision).where(Decision.item_id == item.id, Decision.user_id == actors[user].id)
            )
        data = DecisionInput(
            verdict=verdict, justification=f"{user} checked the clip", item_version=item.version,
            decision_version=mine.version if mine else 0,
        )  # fmt: skip
        with database.write() as db:
            submit_decision(db, actors[user], item.id, data)

    def open_items() -> list[Any]:
        with database.read() as db:
            return list(
                db.scalars(select(Item).where(Item.state.in_(("pending", "in_review"))).order_by(Item.key))
            )

    def timed(label: str, started: float, extra: str = "") -> None:
        print(f"  {label:<46} {time.perf_counter() - started:8.1f} s  {extra}")

    print(f"{args.experiments} experiments in {len(disciplines)} disciplines; batch 1: {half}, batch 2: "
          f"+{len(ids) - half}, exclude {excluded}, re-draft {redrafted}; blind samples {args.blind_samples}")  # fmt: skip
    for video_id in ids[:half]:
        (sources / video_id).symlink_to(every / video_id, target_is_directory=True)
    report1, sent1, seconds = build(ScriptedLab(scripts=scripts))
    batch1 = _records(out)
    print(f"  {'batch 1 build':<46} {seconds:8.1f} s  {report1['calls']['sent']} calls sent, {len(batch1)} items, "
          f"{len(report1['failed_units'])} failed units")  # fmt: skip
    started = time.perf_counter()
    imported1 = import_candidates(database, out)
    timed("batch 1 import", started, json.dumps(imported1.counts))
    started = time.perf_counter()
    pending = open_items()
    reviewed = pending[: len(pending) // 2]
    disputed = {item.key for item in reviewed[::7]}
    for item in reviewed:
        decide("alice", item, "approve")
        decide("bob", item, "reject" if item.key in disputed else "approve")
    timed("two reviewers decide half", started, f"{2 * len(reviewed)} decisions, {len(disputed)} disputed")
    reviewed_keys = {item.release_key for item in reviewed}
    with database.read() as db:
        decisions_before = set(db.scalars(select(Decision.id)))

    for video_id in ids[half:]:
        (sources / video_id).symlink_to(every / video_id, target_is_directory=True)
    _review_csv(out, excluded, "exclude")
    report2, sent2, seconds = build(
        ScriptedLab(scripts=scripts, redraft={redrafted}), redo=(f"level1:{redrafted}",)
    )
    batch2 = _records(out)
    again = set(sent1) & set(sent2)
    redrafted_script = scripts[ids.index(redrafted)]
    # Its sentences: the first of each narration names the replicate; a second one ("Make sure the
    # whole surface is covered.") and the slide's narration read the same in every replicate.
    tails = [
        text[-25:]
        for text in (*(s.narration for s in redrafted_script.steps), redrafted_script.slide_narration)
    ]

    def redrafts(body: str) -> bool:
        text = json.dumps(json.loads(body)["messages"], ensure_ascii=False)
        return f"In replicate {ids.index(redrafted) + 1}:" in text or any(tail in text for tail in tails)

    print(f"  {'batch 2 build (+half, exclude 1, re-draft 1)':<46} {seconds:8.1f} s  {report2['calls']['sent']} calls "
          f"sent, {len(batch2)} items; {len(again)} request bodies sent before, "
          f"{sum(redrafts(body) for body in again)} of them the re-drafted experiment's")  # fmt: skip
    started = time.perf_counter()
    imported2 = import_candidates(database, out)
    timed("batch 2 import", started, json.dumps(imported2.counts))
    outcome = {entry.release_key: entry.outcome for entry in imported2.items}
    with database.read() as db:
        stale = db.scalar(select(func.count()).select_from(Decision).where(Decision.stale.is_(True)))
    started = time.perf_counter()
    remaining = open_items()
    for item in remaining:
        decide("alice", item, "approve")
        decide("bob", item, "approve")
    with database.read() as db:
        conflicts = list(db.scalars(select(Item).where(Item.state == "conflict")))
    for item in conflicts:
        with database.write() as db:
            resolve(
                db, actors["carol"], item.id,
                Resolution(outcome="verified", justification="the clip shows it", item_version=item.version),
            )  # fmt: skip
    timed(
        "review the rest, adjudicate",
        started,
        f"{2 * len(remaining)} decisions, {len(conflicts)} adjudicated",
    )
    started = time.perf_counter()
    export_verified(database, work / "release", internal=work / "internal")
    released = _records(work / "release")
    timed("export", started, f"{len(released)} items released")
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", "eval", "--data", str(work / "release"), "--model", "random:0",
         "--out", str(work / "eval"), "--limit", "2", "--frames", "L1=2,L2=2,L3=4", "--size", "64", "--no-cache",
         "--quiet"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    timed("expvid eval on the export", started, f"exit {result.returncode}")

    with database.read() as db:
        decisions_after = set(db.scalars(select(Decision.id)))
    excluded_keys = {k for k, r in batch1.items() if r["video_id"] == excluded}
    changed = {k for k, o in outcome.items() if o == "changed"}
    moved = [
        k for k in reviewed_keys - excluded_keys
        if (batch2[k]["id"], batch2[k]["answer"], batch2[k]["video_path"])
        != (batch1[k]["id"], batch1[k]["answer"], batch1[k]["video_path"])
    ]  # fmt: skip
    checks = {
        "no decision lost": decisions_before <= decisions_after,
        "no reviewed item changed id, letter or clip": not moved,
        "no item dropped (every item has an outcome)": set(outcome) == set(batch2) | excluded_keys,
        "excluded experiment's items reported removed": {k for k, o in outcome.items() if o == "removed"}
        == excluded_keys,
        "re-drafted items reported changed, and only they": bool(changed)
        and all(batch2[k]["video_id"] == redrafted for k in changed),
        "no call paid twice but the re-draft's": all(redrafts(body) for body in again),
        "every item of batch 2 released": set(released) == set(batch2),
        "expvid eval ran on the export": result.returncode == 0,
    }
    print(
        f"\n  stale decisions kept after batch 2: {stale}; decisions {len(decisions_before)} -> {len(decisions_after)}"
    )
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAILED'}] {name}")
    if not all(checks.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
