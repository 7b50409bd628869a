"""Benchmark: what "cached by file content" costs on a frame-cache hit.

A cache hit must prove the file is still the content whose frames were cached. Three ways, timed
on the same cached request (8 frames of a video), in this process, with the hash memo warm:

  identity (size, mtime)         what the cache used to check: wrong after an in-place rewrite that
                                 keeps size and mtime (`rsync --inplace -t`, `cp --preserve`)
  identity + ctime (expvid now)  the same stat, plus the change time no user tool can set
  full hash on every hit         sha256 of the whole file on every request: always right, slow

It prints each one's time per cache hit (the whole `sample_video` call, entry read included) and
the ratios to the old check (median of interleaved rounds), for a small clip and for a larger file (default 200 MB of video;
the hash grows with the file, the stat does not).

    python benchmarks/frame_cache_check.py [--mb 200] [--repeat 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from expvid.media import cache as cache_module
from expvid.media import fileid
from expvid.media.cache import FrameCache, hash_file
from expvid.media.sampler import sample_video
from expvid.media.synth import scene_frame, write_video


def make_video(path: Path, megabytes: int) -> Path:
    """A coded clip, then padded with a trailing free box to the size asked (an MP4 tolerates it):
    the hash reads every byte, the sampler only the frames."""
    write_video(path, (scene_frame(i, 320, 192) for i in range(300)), fps=30.0, gop=30)
    missing = megabytes * 1_000_000 - path.stat().st_size
    if missing > 8:
        with path.open("ab") as handle:
            handle.write(missing.to_bytes(4, "big") + b"free")
            handle.write(b"\0" * (missing - 8))
    return path


def per_hit(call: Callable[[], object], repeat: int) -> float:
    call()  # warm: the hash memo is filled
    started = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - started) / repeat


def measure(path: Path, cache: FrameCache, repeat: int, rounds: int) -> dict[str, float]:
    """Median over `rounds` of each method's time per hit, the methods interleaved (shared CPUs)."""

    def hit() -> object:
        result = sample_video(path, num_frames=8, cache=cache)
        assert result.from_cache
        return result

    original = fileid.file_identity

    def old_identity(target):  # type: ignore[no-untyped-def]
        return original(target)._replace(ctime_ns=0)

    def old_check() -> object:
        fileid.file_identity = old_identity  # type: ignore[assignment]
        cache_module.file_identity = old_identity  # type: ignore[assignment]
        try:
            return hit()
        finally:
            fileid.file_identity = original
            cache_module.file_identity = original

    def always_hash() -> object:
        cache_module._hash_memo.clear()
        hash_file(path)
        return hit()

    sample_video(path, num_frames=8, cache=cache)  # the first call decodes and stores the entry
    methods = {
        "identity (size, mtime)": (old_check, repeat),
        "identity + ctime (expvid now)": (hit, repeat),
        "full hash on every hit": (always_hash, max(3, repeat // 20)),
    }
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(rounds):
        for name, (call, count) in methods.items():
            times[name].append(per_hit(call, count))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        fileid.RACY_NS = 0  # the files were just written; remember their hashes at once
        for label, megabytes in (("clip", 0), (f"{args.mb} MB file", args.mb)):
            path = make_video(root / f"{label.replace(' ', '_')}.mp4", megabytes)
            cache = FrameCache(root / f"cache-{megabytes}")
            results = measure(path, cache, args.repeat, args.rounds)
            base = results["identity (size, mtime)"]
            size = path.stat().st_size / 1e6
            print(f"{label} ({size:.1f} MB), per cache hit of 8 frames:")
            for name, seconds in results.items():
                print(f"  {name:32s} {seconds * 1e3:8.3f} ms   {seconds / base:6.2f}x the old check")


if __name__ == "__main__":
    main()
