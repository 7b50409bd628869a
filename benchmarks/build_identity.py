"""Benchmark: what a campaign's second batch costs and changes, on the bundled sample (issue 18, section 1).

The issue measured, on the sample build (328 items): marking one more experiment `keep` changed the
answer letter of 247 existing items and sent 825 blind-audit calls where 90 were needed; adding an
experiment whose id sorts first kept 0 of 328 ids; excluding a drafted experiment re-paid 603 blind
calls; `touch` on the sources re-cut all 143 clips and renamed every Level-1/2 clip; a finished build's
dry run forecast 984 blind calls. Each scenario is replayed here against the scripted lab of the tests
on a loopback server, and what the server received and what changed in the files is counted:

1. the sample minus the experiment whose id sorts first (61842), built;
2. `review = keep` for a rejected experiment in curation.csv (67002), built again;
3. the experiment whose id sorts first added, built again;
4. a drafted experiment excluded in curation.csv (63090), built again;
5. `touch` on every source file, built again;
6. `--dry-run` on the finished build.

For each: model calls sent (and blind-audit calls among them, against the new items x samples that
were needed), existing items whose id, letter, options or clip file changed, clips cut.

Usage: python benchmarks/build_identity.py [--blind-samples 3]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "build_identity"
sys.path.insert(0, str(ROOT.parent / "tests" / "construction"))


def _sample() -> Path:
    sample = CACHE / "sample"
    if not (sample / "sources").is_dir():
        subprocess.run(
            [sys.executable, "-m", "expvid.cli.main", "sample", "make", str(sample)],
            check=True,
            capture_output=True,
        )
    return sample / "sources"


def _snapshot(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted((out / "annotations").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            found[f"{path.stem}/{record['id']}"] = {
                "answer": record["answer"],
                "options": record.get("options"),
                "clip": record["video_path"],
            }
    return found


def _review(out: Path, video_id: str, value: str) -> None:
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
    parser.add_argument("--blind-samples", type=int, default=3)
    args = parser.parse_args()

    from build_helpers import build_config
    from build_responder import ScriptedLab

    from expvid.construction import build_candidates, estimate_candidates
    from expvid.fakes.models.server import LoopbackServer

    sample = _sample()
    work = CACHE / "run"
    shutil.rmtree(work, ignore_errors=True)
    sources = work / "sources"
    sources.mkdir(parents=True)
    for folder in sorted(sample.iterdir()):
        if folder.name != "61842":
            shutil.copytree(folder, sources / folder.name)
    out = work / "out"
    samples = args.blind_samples
    previous: dict[str, dict[str, Any]] = {}
    print(f"blind samples per item: {samples}\n")
    print(f"{'scenario':<44} {'sent':>5} {'blind sent':>10} {'blind needed':>12} {'ids kept':>9} "
          f"{'letter/options changed':>22} {'clip renamed':>12} {'clips cut':>9} {'s':>5}")  # fmt: skip

    def step(name: str) -> None:
        nonlocal previous
        with LoopbackServer(ScriptedLab()) as server:
            started = time.perf_counter()
            report = asyncio.run(
                build_candidates(build_config(sources, out, server, blind_samples=samples, jobs=None))
            )
            seconds = time.perf_counter() - started
        now = _snapshot(out)
        kept = [uid for uid in previous if uid in now]
        new = [uid for uid in now if uid not in previous]
        changed = sum(
            1
            for uid in kept
            if (now[uid]["answer"], now[uid]["options"])
            != (previous[uid]["answer"], previous[uid]["options"])
        )
        renamed = sum(1 for uid in kept if now[uid]["clip"] != previous[uid]["clip"])
        blind = report["phases"].get("blind_audit", {}).get("calls_sent", 0)
        print(f"{name:<44} {report['calls']['sent']:>5} {blind:>10} {len(new) * samples:>12} "
              f"{len(kept):>4}/{len(previous):<4} {changed:>22} {renamed:>12} {report['clips']['clips_cut']:>9} "
              f"{seconds:>5.1f}")  # fmt: skip
        previous = now

    step("1. sample without 61842 (first build)")
    _review(out, "67002", "keep")
    step("2. one more experiment marked keep (67002)")
    shutil.copytree(sample / "61842", sources / "61842")
    step("3. experiment whose id sorts first added")
    _review(out, "63090", "exclude")
    step("4. a drafted experiment excluded (63090)")
    later = time.time() + 3600
    for path in sources.rglob("*"):
        if path.is_file():
            os.utime(path, (later, later))
    step("5. touch on every source file")
    with LoopbackServer(ScriptedLab()) as server:
        estimate = asyncio.run(estimate_candidates(build_config(sources, out, server, blind_samples=samples)))
    print(f"\n6. --dry-run of the finished build: {estimate['stages']['blind_audit']['calls']} blind-audit call(s), "
          f"{estimate['total']['calls']} call(s) in all; {estimate['notes'][-2]}")  # fmt: skip


if __name__ == "__main__":
    main()
