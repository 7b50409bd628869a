"""Benchmark: `expvid build` on the bundled sample, clip cutting one pass per video, and `--jobs`.

Three measurements, all in this run, on the same machine:

1. Decode passes per source video (frames decoded / frames in the video), for the clips a real build
   of the sample cuts: before = every clip by its own seek-decode-encode (`cut_clip`: from the
   keyframe at or before the clip start to its end, counted with the packet index); after = one
   ordered pass for all clips of the video (`cut_clips`, as the build does; counted by the cutter).
2. CPU time to cut those clips in one process, per-clip vs one pass (same encoder settings).
3. Whole builds against the scripted LLM of the tests on a loopback server (`tests/construction`), each
   into a fresh candidate directory, in four set-ups: one process or `--jobs N` worker processes,
   each with one encoder thread per clip or FFmpeg's automatic thread count (`clip_threads` 0). Model
   replies come from a shared response cache after the first build, so the builds differ only in
   cutting. Printed: the median build wall time and clip-phase wall time of each, and their ratios
   against `--jobs 1` with one thread (real wall-time ratios: > 1 is faster). The build picks its
   default (`context.default_jobs`, `default_clip_threads`) from these numbers.

Usage: python benchmarks/build_clips.py [--jobs 2] [--repeat 3] [--skip-passes]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from bisect import bisect_right
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "build_clips"
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


def _build(sources: Path, out: Path, server: object, jobs: int, cache: Path | None, threads: int = 1) -> dict:
    from build_helpers import build_config

    from expvid.construction import build_candidates

    shutil.rmtree(out, ignore_errors=True)
    if cache is not None:  # reuse the model replies of the first build: only cutting differs
        (out / ".build").mkdir(parents=True)
        shutil.copytree(cache, out / ".build" / "cache")
    config = build_config(sources, out, server, jobs=jobs, clip_threads=threads, blind_samples=1)
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-passes", action="store_true", help="Only the whole-build comparison (3).")
    args = parser.parse_args()

    from build_responder import ScriptedLab

    from expvid.fakes.models.server import LoopbackServer

    sources = _sample()
    work = CACHE / "runs"
    with LoopbackServer(ScriptedLab()) as server:
        first = _build(sources, work / "first", server, 1, None)
        cache = work / "first" / ".build" / "cache"
        print(f"sample build: {first['calls']['sent']} calls sent, {first['tokens']['prompt']} prompt tokens, "
              f"{first['tokens']['completion']} completion tokens, {first['total_items']} items")  # fmt: skip
        if not args.skip_passes:
            _passes(sources, work)
        print(f"\n3. whole build of the sample (model replies from the cache), {os.cpu_count()} cores here, "
              f"{len(os.sched_getaffinity(0))} usable; median of {args.repeat}")  # fmt: skip
        setups = [(1, 1), (1, 0), (args.jobs, 1), (args.jobs, 0)]
        rows: dict[tuple[int, int], list[tuple[float, float, float]]] = {}
        for _ in range(args.repeat):  # interleaved, so a busy spell on a shared machine hits every set-up
            for jobs, threads in setups:
                report = _build(sources, work / f"jobs{jobs}_t{threads}", server, jobs, cache, threads)
                clips = report["clips"]
                runs = rows.setdefault((jobs, threads), [])
                runs.append((report["bench_wall"], clips["wall_seconds"], clips["worker_seconds"]))
        base = (statistics.median(r[0] for r in rows[(1, 1)]), statistics.median(r[1] for r in rows[(1, 1)]))
        for (jobs, threads), runs in rows.items():
            wall = statistics.median(r[0] for r in runs)
            clip_wall = statistics.median(r[1] for r in runs)
            worker = statistics.median(r[2] for r in runs)
            label = "auto" if threads == 0 else str(threads)
            print(f"  --jobs {jobs}, encoder threads {label:>4}: build {wall:5.1f} s ({base[0] / wall:.2f}x), "
                  f"clip phase {clip_wall:5.1f} s ({base[1] / clip_wall:.2f}x), {worker:5.1f} s in workers")  # fmt: skip


def _passes(sources: Path, work: Path) -> None:
    print("\n1-2. decode passes and CPU seconds per video (per-clip cutter vs one pass)")
    print(
        f"{'video':>6} {'clips':>5} {'passes before':>14} {'passes after':>13} {'cpu before':>11} {'cpu after':>10}"
    )
    totals = [0, 0, 0, 0.0, 0.0]
    for vid, clips in sorted(_clip_specs(work / "first").items()):
        video = sources / vid / "video.mp4"
        before, frames = _per_clip_decoded(video, clips)
        cpu_before, cpu_after, after = _cut_both(video, clips, work / "cut" / vid)
        totals = [totals[0] + before, totals[1] + after, totals[2] + frames, totals[3] + cpu_before,
                  totals[4] + cpu_after]  # fmt: skip
        print(f"{vid:>6} {len(clips):>5} {before / frames:>14.2f} {after / frames:>13.2f} "
              f"{cpu_before:>10.2f}s {cpu_after:>9.2f}s")  # fmt: skip
    print(f"{'all':>6} {'':>5} {totals[0] / totals[2]:>14.2f} {totals[1] / totals[2]:>13.2f} "
          f"{totals[3]:>10.2f}s {totals[4]:>9.2f}s  (cpu ratio {totals[3] / totals[4]:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
