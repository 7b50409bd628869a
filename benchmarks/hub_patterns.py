"""Selecting files for `snapshot_download`: collapsed patterns vs one pattern per file, on an ExpVid-sized repo.

huggingface_hub matches every repo file against every `allow_patterns` entry (fnmatch). The release has
about 8,000 videos; a fetch of some tasks names thousands of them. Measured here: the time
`filter_repo_objects` (what `snapshot_download` calls) spends on a synthetic listing with the ExpVid
layout, for three selections, with `expvid.hub.patterns.minimal_patterns` and with one escaped pattern
per file; both must select exactly the same files. Where no folder collapses (a scattered selection),
the patterns stay one per file; that is why `expvid.hub.fetch` switches to per-file downloads above
`MAX_PATTERNS` patterns instead of handing such a list to `snapshot_download`.

    python benchmarks/hub_patterns.py [--videos-per-experiment 12] [--experiments 390]
"""

from __future__ import annotations

import argparse
import glob
import random
import time

from huggingface_hub.utils import filter_repo_objects

from expvid.hub.patterns import minimal_patterns


def listing(experiments: int, clips: int) -> list[str]:
    files = [f"annotations/level{n}/t{k}.jsonl" for n in (1, 2, 3) for k in range(4)]
    for e in range(experiments):
        vid = 50000 + e
        files += [f"videos/level_1/{vid}/clip_{c}.mp4" for c in range(clips)]
        files += [f"videos/level_2/video_segments/{vid}/clip_{c}.mp4" for c in range(clips // 3)]
        files.append(f"videos/level_3/{vid}_.mp4")
    return files


def timed(patterns: list[str], files: list[str]) -> tuple[float, set[str]]:
    start = time.perf_counter()
    selected = set(filter_repo_objects(files, allow_patterns=patterns))
    return time.perf_counter() - start, selected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--experiments", type=int, default=390)
    parser.add_argument("--videos-per-experiment", type=int, default=12)
    args = parser.parse_args()
    files = listing(args.experiments, args.videos_per_experiment)
    videos = [f for f in files if f.endswith(".mp4")]
    rng = random.Random(0)
    selections = {
        "all videos": videos,
        "level 1 only": [f for f in videos if "/level_1/" in f],
        "a random half of level 1": [f for f in videos if "/level_1/" in f and rng.random() < 0.5],
    }
    print(f"{len(files)} files in the listing")
    print(
        f"{'selection':28} {'files':>6} {'patterns':>9} {'per-file s':>11} {'collapsed s':>12} {'ratio':>7}"
    )
    for name, needed in selections.items():
        collapsed = minimal_patterns(needed, files)
        per_file = [glob.escape(f) for f in needed]
        slow, selected_slow = timed(per_file, files)
        fast, selected_fast = timed(collapsed, files)
        assert selected_slow == selected_fast == set(needed), name
        print(
            f"{name:28} {len(needed):>6} {len(collapsed):>9} {slow:>11.3f} {fast:>12.4f} {slow / fast:>6.0f}x"
        )


if __name__ == "__main__":
    main()
