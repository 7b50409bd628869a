"""Benchmark: `expvid build` on the bundled sample, clip cutting one pass per video, and `--jobs`.

Three measurements, all in this run, on the same machine:

1. Decode passes per source video (frames decoded / frames in the video), for the clips a real build
   of the sample cuts: before = every clip by its own seek-decode-encode (`cut_clip`: from the
   keyframe at or before the clip start to its end, counted with the packet index); after = one
   ordered pass for all clips of the video (`cut_clips`, as the build does; counted by the cutter).
2. CPU time to cut those clips in one process, per-clip vs one pass (same encoder settings).
3. Whole builds against the scripted LLM of the tests on a loopback server (`tests/construction`), with
   `--jobs 1` and `--jobs N`, each into a fresh candidate directory: wall time, the clip phase's wall
   and worker seconds, and the speed-up the build report prints. Model replies come from a shared
   response cache after the first build, so the builds differ only in cutting.

Usage: python benchmarks/build_clips.py [--jobs 2] [--repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import time
from bisect import bisect_right
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "build_clips"
sys.path.insert(0, str(ROOT.parent / "tests" / "build"))


def _sample() -> Path:
    sample = CACHE / "sample"
    if not (sample / "sources").is_dir():
        subprocess.run(
            [sys.executable, "-m", "expvid.cli.main", "sample", "make", str(sample)],
            check=True,
            capture_output=True,
        )
    return sample / "sources"


def _build(sources: Path, out: Path, server: object, jobs: int, cache: Path | None) -> dict:
    from build_helpers import build_config

    from expvid.construction import build_candidates

    shutil.rmtree(out, ignore_errors=True)
    if cache is not None:  # reuse the model replies of the first build: only cutting differs
        (out / ".build").mkdir(parents=True)
        shutil.copytree(cache, out / ".build" / "cache")
    config = build_config(sources, out, server, jobs=jobs, blind_samples=1)
    started = time.perf_counter()
    report = asyncio.run(build_candidates(config))
    report["bench_wall"] = time.perf_counter() - started
    return report


def _clip_specs(out: Path) -> dict[str, list[tuple[float, float, tuple]]]:
    """Every clip the build cut, per video, from provenance (windows and removed spans)."""
    specs: dict[str, set] = {}
    for line in (out / "provenance.jsonl").read_text().splitlines():
        entry = json.loads(line)
        source = entry["source"]  # Level-3 items: the trimmed full video (cut too, with --trim-slides)
        removed = tuple(tuple(r) for r in source.get("removed", []))
        specs.setdefault(entry["video_id"], set()).add((source["start"], source["end"], removed))
    return {vid: sorted(s) for vid, s in specs.items()}


def _per_clip_decoded(video: Path, clips: list[tuple[float, float, tuple]]) -> tuple[int, int]:
    """Frames `cut_clip` decodes for these clips (keyframe at or before the start up to the end)."""
    from expvid.media.index import build_index

    index = build_index(video)
    times = list(index.frame_times)
    keys = sorted(
        float(index.frame_times[i]) for i in range(len(times)) if index.packet_key[index.frame_packet[i]]
    )
    decoded = 0
    for start, end, _removed in clips:
        key = keys[max(0, bisect_right(keys, start + 1e-6) - 1)]
        decoded += sum(1 for t in times if key - 1e-6 <= t < end + 1e-6)
    return decoded, len(times)


def _cut_both(video: Path, clips: list, work: Path) -> tuple[float, float, int]:
    from expvid.media.clip_pass import ClipJob, cut_clips
    from expvid.media.clips import cut_clip

    work.mkdir(parents=True, exist_ok=True)
    started = time.process_time()
    for i, (start, end, removed) in enumerate(clips):
        cut_clip(
            video, work / f"one_{i}.mp4", start=start, end=end, remove=removed, preset="ultrafast", threads=1
        )
    per_clip = time.process_time() - started
    started = time.process_time()
    _, stats = cut_clips(
        video,
        [ClipJob(str(work / f"pass_{i}.mp4"), s, e, r) for i, (s, e, r) in enumerate(clips)],
        preset="ultrafast",
    )
    one_pass = time.process_time() - started
    return per_clip, one_pass, stats.decoded_frames


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    from build_responder import ScriptedLab

    from expvid.models.loopback import LoopbackServer

    sources = _sample()
    work = CACHE / "runs"
    with LoopbackServer(ScriptedLab()) as server:
        first = _build(sources, work / "first", server, 1, None)
        cache = work / "first" / ".build" / "cache"
        print(f"sample build: {first['calls']['sent']} calls sent, {first['tokens']['prompt']} prompt tokens, "
              f"{first['tokens']['completion']} completion tokens, {first['total_items']} items")  # fmt: skip
        print("\n1-2. decode passes and CPU seconds per video (per-clip cutter vs one pass)")
        print(
            f"{'video':>6} {'clips':>5} {'passes before':>14} {'passes after':>13} {'cpu before':>11} {'cpu after':>10}"
        )
        totals = [0, 0, 0, 0.0, 0.0]
        for vid, clips in sorted(_clip_specs(work / "first").items()):
            video = sources / vid / "video.mp4"
            before, frames = _per_clip_decoded(video, clips)
            cpu_before, cpu_after, after = _cut_both(video, clips, work / "cut" / vid)
            totals = [
                totals[0] + before,
                totals[1] + after,
                totals[2] + frames,
                totals[3] + cpu_before,
                totals[4] + cpu_after,
            ]
            print(
                f"{vid:>6} {len(clips):>5} {before / frames:>14.2f} {after / frames:>13.2f} {cpu_before:>10.2f}s {cpu_after:>9.2f}s"
            )
        print(f"{'all':>6} {'':>5} {totals[0] / totals[2]:>14.2f} {totals[1] / totals[2]:>13.2f} "
              f"{totals[3]:>10.2f}s {totals[4]:>9.2f}s  (cpu ratio {totals[3] / totals[4]:.2f}x)")  # fmt: skip

        print(
            f"\n3. whole build of the sample (model replies from the cache), --jobs 1 vs --jobs {args.jobs}"
        )
        rows = {}
        for jobs in (1, args.jobs):
            walls, clip_walls, workers, speedups = [], [], [], []
            for _ in range(args.repeat):
                report = _build(sources, work / f"jobs{jobs}", server, jobs, cache)
                walls.append(report["bench_wall"])
                clip_walls.append(report["clips"]["wall_seconds"])
                workers.append(report["clips"]["worker_seconds"])
                speedups.append(report["clips"]["speedup"] or 0.0)
            rows[jobs] = (min(walls), min(clip_walls), min(workers), max(speedups))
            print(f"  --jobs {jobs}: build {rows[jobs][0]:.1f} s, clip phase {rows[jobs][1]:.1f} s wall for "
                  f"{rows[jobs][2]:.1f} s of cutting (report speed-up {rows[jobs][3]:.2f}x)")  # fmt: skip
        print(f"  build wall ratio jobs 1 / jobs {args.jobs}: {rows[1][0] / rows[args.jobs][0]:.2f}x; "
              f"clip phase ratio {rows[1][1] / rows[args.jobs][1]:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
