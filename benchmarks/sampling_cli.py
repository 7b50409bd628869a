"""Benchmark: N frames at 224x224 from the shell, cold: `expvid frames` against a decord script.

What a user waits for when they ask for the frames of a video they have not sampled before: each
command runs in a fresh process (interpreter start, imports, index, decoding, resizing, JPEG
encoding, files written), and the clock runs from spawning it to its exit. Both write the same
output: N 224x224 JPEG files (quality 90) of the same frames.

  expvid       expvid frames VIDEO --num N --size 224 --no-cache --out DIR
  decord       python -c "...": VideoReader(VIDEO, width=224, height=224).get_batch(frames) (decord
               scales as it decodes), then Pillow writes JPEG q90, one file per frame; decord is
               given expvid's frame numbers (the frames at the N segment midpoints), so both
               decode the same frames
  expvid@base  (with --compare-src DIR) the same expvid command with `expvid` imported from DIR,
               e.g. an export of main's src/, to measure a change against its base in one run

Wall time, CPU time of all threads (user + system) and peak memory come from `os.wait4` on the
child. One untimed run of each command comes first (bytecode written, libraries and the video in
the page cache: "cold" is the process, not the disk), and the commands run with bytecode caching
on, as an installed copy does. Methods alternate within each round and the order rotates between
rounds; the table gives medians and the ratios are medians of the per-round ratios. Every output
is checked: the frame number drawn into each frame (expvid.media.synth) is read back from every
JPEG.

On a shared machine, wall times measure the other work as much as the commands: Linux shares the
CPU between sessions first (autogroups), so another session's tests take a core whatever the
commands' niceness. `--nice -15` (root) runs the benchmark in a session of its own ahead of other
work, both commands alike: the nearest thing to a quiet machine. Without it, wall ratios drift
towards the CPU-time ratios.

The video is the one `frame_sampling.py` generates (benchmarks/.cache/, reused): 5 minutes of
1280x720 H.264, 3 B-frames, a keyframe every 8 s, CRF 21 (1.7 Mbit/s) by default. Where the time
goes inside the expvid command: `python benchmarks/sampling_profile.py`.

Usage: python benchmarks/sampling_cli.py [--ns 32,128] [--rounds 5] [--minutes 5] [--crf 21]
       [--compare-src DIR] [--nice -15]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from frame_sampling import CACHE_DIR, SIZE, ensure_video

#: decord as lmms-eval / VLMEvalKit drive it, asked for 224x224 frames (it scales them in its own
#: decoding threads, so no full-size frame is kept), each written as a JPEG (quality 90) by Pillow.
DECORD_SCRIPT = """
import json, sys
from pathlib import Path
from decord import VideoReader, cpu
from PIL import Image
video, plan, n, out = sys.argv[1:5]
indices = json.loads(Path(plan).read_text())[n]
batch = VideoReader(video, ctx=cpu(0), width=SIZE, height=SIZE).get_batch(indices).asnumpy()
for position, (index, rgb) in enumerate(zip(indices, batch)):
    Image.fromarray(rgb).save(Path(out) / f"frame_{position:04d}_idx{index:06d}.jpg", quality=90)
""".replace("SIZE", str(SIZE))

#: `expvid` as its console script starts it.
EXPVID_LAUNCHER = "import sys\nfrom expvid.cli.main import app\nsys.exit(app())"


@dataclass
class Run:
    """One command, one N, one round."""

    method: str
    n: int
    wall: float
    cpu: float
    peak_mib: float
    load: float  # 1-minute load average when it started
    codes_ok: bool
    error: str = ""


def command(method: str, video: Path, n: int, plan_file: Path, out: Path) -> list[str]:
    if method.startswith("expvid"):
        launch = [sys.executable, "-c", EXPVID_LAUNCHER, "frames", str(video)]
        return [*launch, "--num", str(n), "--size", str(SIZE), "--no-cache", "--out", str(out)]
    if method == "decord":
        return [sys.executable, "-c", DECORD_SCRIPT, str(video), str(plan_file), str(n), str(out)]
    raise ValueError(f"unknown method {method}")


def run_once(
    method: str, video: Path, n: int, plan: dict[str, list[int]], work: Path, src: Path | None
) -> Run:
    """Spawn one command, wait for it, and check the frames it wrote."""
    out = Path(tempfile.mkdtemp(prefix=f"{method}-{n}-", dir=work))
    env = child_environment(src if method == "expvid@base" else None)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with open(out / "stdout.json", "wb") as stdout:
        child = subprocess.Popen(
            command(method, video, n, work / "plan.json", out),
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert child.stderr is not None
        stderr = child.stderr.read()  # a few lines at most; read before waiting, so no pipe fills up
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    if child.returncode != 0:
        message = stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        return Run(method, n, wall, cpu, usage.ru_maxrss / 1024, load, False, error=message[0])
    codes = read_codes(out)
    shutil.rmtree(out, ignore_errors=True)
    return Run(method, n, wall, cpu, usage.ru_maxrss / 1024, load, codes == plan[str(n)])


def run_ahead(nice: int) -> None:
    """Run this benchmark and every command it starts at niceness `nice` (negative: ahead of other
    work; root only), in a session of its own; returns in that session (re-running the script there
    if this process is not a session leader yet).

    Why a session: with autogroups (`/proc/sys/kernel/sched_autogroup_enabled`, on by default) Linux
    shares the CPU between sessions first, so another session's tests take half the cores whatever
    the niceness of a process here; the niceness that counts is the session's, set in
    /proc/self/autogroup. The commands compared all run at it alike.
    """
    if nice == 0:
        return
    if os.getsid(0) != os.getpid():
        done = subprocess.run([sys.executable, *sys.argv], start_new_session=True, check=False)
        sys.exit(done.returncode)
    autogroup = Path("/proc/self/autogroup")
    if autogroup.exists():
        autogroup.write_text(str(nice))
    os.setpriority(os.PRIO_PROCESS, 0, nice)


def child_environment(src: Path | None = None) -> dict[str, str]:
    """The commands' environment: bytecode caching on, as in any installed copy (with this machine's
    PYTHONDONTWRITEBYTECODE=1, every run would compile expvid's modules again: 50-90 ms), and
    `expvid` imported from `src` when given."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def read_codes(directory: Path) -> list[int | None]:
    """The frame number drawn into each JPEG, in output order (None where unreadable)."""
    from expvid.media.synth import FrameCodeError, read_frame_code
    from expvid.media.transform import decode_image

    codes: list[int | None] = []
    for path in sorted(directory.glob("frame_*.jpg")):
        try:
            codes.append(read_frame_code(decode_image(path.read_bytes())))
        except FrameCodeError:
            codes.append(None)
    return codes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ns", default="32,128")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument(
        "--crf", type=int, default=21, help="x264 CRF of the video: 21 (1.7 Mbit/s), 19 (higher bitrate)"
    )
    parser.add_argument("--compare-src", type=Path, help="also run expvid imported from this src/ folder")
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run at this niceness, in a session of its own; on a shared machine a negative one (root) "
        "keeps other work from taking the cores: the nearest thing to a quiet machine",
    )
    args = parser.parse_args()
    run_ahead(args.nice)

    from expvid.media.index import load_index
    from expvid.media.plan import uniform_times

    ns = [int(n) for n in args.ns.split(",")]
    methods = ["expvid", "decord"] + (["expvid@base"] if args.compare_src else [])
    video = ensure_video(args.minutes, crf=args.crf)
    index = load_index(video)
    info = index.info
    print(
        f"video: {video.name}: {info.width}x{info.height} {info.codec}, {info.num_frames} frames, "
        f"{info.duration:.1f} s, {info.keyframes} keyframes, {info.size_bytes * 8 / info.duration / 1e6:.2f} Mbit/s; "
        f"{os.cpu_count()} CPUs; load average at start {os.getloadavg()[0]:.1f}; commands at niceness {args.nice}"
    )
    plan = {str(n): [int(i) for i in index.frames_at(uniform_times(info.start, info.end, n))] for n in ns}
    work = Path(tempfile.mkdtemp(prefix="expvid-cli-bench-", dir=CACHE_DIR))
    (work / "plan.json").write_text(json.dumps(plan))
    runs: list[Run] = []
    try:
        for method in methods:  # untimed: bytecode written, shared libraries and the file in the page cache
            run_once(method, video, ns[0], plan, work, args.compare_src)
        for round_number in range(args.rounds):
            for n in ns:
                shift = round_number % len(methods)
                for method in methods[shift:] + methods[:shift]:
                    run = run_once(method, video, n, plan, work, args.compare_src)
                    runs.append(run)
                    shown = f"{run.wall:.3f} s" if not run.error else f"FAILED {run.error}"
                    print(f"  round {round_number + 1} N={n:<4} {method:<12} {shown}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(runs, ns, methods, args.rounds)


def report(runs: list[Run], ns: list[int], methods: list[str], rounds: int) -> None:
    def cell(method: str, n: int) -> list[Run]:
        return [run for run in runs if run.method == method and run.n == n and not run.error]

    print(f"\nfresh process per command, {rounds} rounds; medians (min-max)")
    print("| N | command | wall s | CPU s (all threads) | peak MiB | frames exact | load avg |")
    print("|---|---|---|---|---|---|---|")
    for n in ns:
        for method in methods:
            done = cell(method, n)
            if not done:
                print(f"| {n} | {method} | failed | | | | |")
                continue
            walls = [run.wall for run in done]
            print(
                f"| {n} | {method} | {statistics.median(walls):.3f} ({min(walls):.2f}-{max(walls):.2f}) "
                f"| {statistics.median(run.cpu for run in done):.3f} "
                f"| {statistics.median(run.peak_mib for run in done):.0f} "
                f"| {sum(run.codes_ok for run in done)}/{len(done)} "
                f"| {statistics.median(run.load for run in done):.1f} |"
            )

    def ratios(slower: str, faster: str, n: int, field: str) -> list[float]:
        """Per-round ratios slower/faster (runs of one round sit next to each other in time)."""
        pairs = zip(
            [run for run in runs if run.method == slower and run.n == n],
            [run for run in runs if run.method == faster and run.n == n],
            strict=False,
        )
        return [getattr(a, field) / getattr(b, field) for a, b in pairs if not a.error and not b.error]

    comparisons = [("decord", "expvid")] + ([("expvid@base", "expvid")] if "expvid@base" in methods else [])
    for slower, faster in comparisons:
        print(f"\n{slower} / {faster}: median of per-round ratios (min-max); above 1: {faster} is faster")
        print("| N | wall | CPU | peak memory |")
        print("|---|---|---|---|")
        for n in ns:
            cells = []
            for field in ("wall", "cpu", "peak_mib"):
                values = ratios(slower, faster, n, field)
                cells.append(
                    f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"
                    if values
                    else "-"
                )
            print(f"| {n} | " + " | ".join(cells) + " |")
    exact = all(run.codes_ok for run in runs)
    print(f"\nevery command returned the planned frames in every round: {exact}")
    print(f"load average at end {os.getloadavg()[0]:.1f} (counts other sessions' work too; see --nice)")


if __name__ == "__main__":
    main()
