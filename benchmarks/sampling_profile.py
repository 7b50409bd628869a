"""Benchmark: where the time of `expvid frames VIDEO --num N --size 224 --no-cache` goes.

Each run is a fresh process (cold: no index, no decoder state, nothing cached) that runs the real
command in-process with timers wrapped around the calls that do the work:

  start-up       interpreter start, this script's own imports, exit
  imports        Typer, NumPy, PyAV, Pillow and expvid's modules
  packet index   one demux pass over the file (every packet's pts, keyframe and reference flags)
                 plus decoding the first picture (rotation, size)
  decode phase   the decoders (two threads by default), from the first to the last one's end;
                 inside it, CPU seconds of all threads by kind of work:
                   demux            reading packets (also those the decoder is not given)
                   seek             container seeks, decoder drains and resets between GOPs
                   decode           H.264 decoding (libavcodec) of the reference pictures and targets
                   colour + resize  YUV -> RGB and 1280x720 -> 224x224 in one swscale call per target
                   encode           JPEG (Pillow, quality 90) per target
                   bookkeeping      the Python that feeds packets and matches pictures to targets
  rest           everything else in the command: arguments, plan, starting the decoder threads,
                 JSON printed, files written

Colour conversion and resizing happen in one swscale call, so the profile cannot split them; the
last table does, by converting the same decoded pictures the three ways (conversion alone at full
size, resizing alone in YUV, both in one call) and timing each per frame.

One untimed run comes first (bytecode written, libraries and the video in the page cache), and
the runs have bytecode caching on, as an installed copy does. Runs are repeated and the median
of each part is printed, with the 1-minute load average. On a shared machine the wall times
include waiting for a core: --nice -15 (root) runs the profile ahead of other work (see
sampling_cli.py); CPU seconds compare either way.

Usage: python benchmarks/sampling_profile.py [--ns 32,128] [--repeat 3] [--minutes 5] [--src DIR] [--nice -10]
(--src: profile expvid imported from another checkout's src/, e.g. main's, for a before/after)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()  # before any import below: the process's own clock starts here

HERE = Path(__file__).resolve().parent
PARTS = ["demux", "seek", "decode", "colour + resize", "encode", "bookkeeping"]


class Timers:
    """CPU seconds (of the calling thread) and call counts per kind of work, from any thread."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.wall: dict[str, float] = {}
        self.workers: list[float] = []  # CPU seconds of each decoder thread
        self.ends: list[float] = []  # when each decoder thread finished (perf_counter)
        self.decode_span = [float("inf"), 0.0]  # first worker start, last worker end (perf_counter)
        self.pictures: list[Any] = []  # a few decoded targets, for the colour/resize split
        self._lock = threading.Lock()

    def add(self, part: str, seconds: float) -> None:
        with self._lock:
            self.cpu[part] += seconds
            self.calls[part] += 1

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.add(part, time.thread_time() - started)

        return timed


class _Context:
    """The stream's codec context, with `decode` and `flush_buffers` timed."""

    def __init__(self, context: Any, timers: Timers) -> None:
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_timers", timers)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._context, name, value)

    def decode(self, packet: Any) -> Any:
        started = time.thread_time()
        frames = self._context.decode(packet)
        # decode(None) drains the decoder before a seek or at the end: counted with seeks.
        self._timers.add("decode" if packet is not None else "seek", time.thread_time() - started)
        if frames and len(self._timers.pictures) < 8:
            self._timers.pictures.extend(frames[: 8 - len(self._timers.pictures)])
        return frames

    def flush_buffers(self) -> None:
        started = time.thread_time()
        self._context.flush_buffers()
        self._timers.add("seek", time.thread_time() - started)


class _Stream:
    def __init__(self, stream: Any, timers: Timers) -> None:
        self.inner = stream
        self.codec_context = _Context(stream.codec_context, timers)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Container:
    def __init__(self, container: Any, timers: Timers) -> None:
        self.inner = container
        self.timers = timers

    def seek(self, *args: Any, stream: _Stream, **kwargs: Any) -> None:
        started = time.thread_time()
        self.inner.seek(*args, stream=stream.inner, **kwargs)
        self.timers.add("seek", time.thread_time() - started)

    def demux(self, stream: _Stream) -> Iterator[Any]:
        packets = self.inner.demux(stream.inner)
        while True:
            started = time.thread_time()
            try:
                packet = next(packets)
            except StopIteration:
                return
            finally:
                self.timers.add("demux", time.thread_time() - started)
            yield packet


def instrument(timers: Timers) -> None:
    """Wrap the calls that do the work (the decoders' container, stream, context; the converters)."""
    import expvid.media.decode as decode
    import expvid.media.sampler as sampler

    open_video = decode.open_video

    @contextlib.contextmanager
    def timed_open(path: Any) -> Iterator[tuple[Any, Any]]:
        with open_video(path) as (container, stream):
            yield _Container(container, timers), _Stream(stream, timers)

    decode.open_video = timed_open  # type: ignore[assignment]
    run = decode._Worker.run

    def timed_run(worker: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return run(worker)
        finally:
            timers.workers.append(time.thread_time() - cpu)
            timers.ends.append(time.perf_counter())
            with timers._lock:
                timers.decode_span[0] = min(timers.decode_span[0], wall)
                timers.decode_span[1] = max(timers.decode_span[1], time.perf_counter())

    decode._Worker.run = timed_run  # type: ignore[method-assign]
    sampler.frame_to_rgb = timers.wrap("colour + resize", sampler.frame_to_rgb)  # type: ignore[assignment]
    sampler.encode_image = timers.wrap("encode", sampler.encode_image)  # type: ignore[assignment]
    load_index = sampler.load_index

    def timed_index(path: Any) -> Any:
        started = time.perf_counter()
        try:
            return load_index(path)
        finally:
            timers.wall["packet index"] = time.perf_counter() - started

    sampler.load_index = timed_index  # type: ignore[assignment]


def colour_resize_split(pictures: list[Any], width: int, height: int) -> dict[str, float]:
    """Milliseconds per frame: YUV->RGB alone (full size), resize alone (in YUV), both in one call;
    one thread and one scaler per way, as the decoders convert (fastest of 5 passes: warm caches)."""
    from av.video.reformatter import VideoReformatter

    from expvid.media.transform import INTERPOLATION

    ways = {
        "colour only (YUV -> RGB, full size)": {"format": "rgb24"},
        "resize only (YUV, to 224x224)": {"width": width, "height": height},
        "both in one swscale call (what expvid does)": {"width": width, "height": height, "format": "rgb24"},
    }
    result = {}
    for name, options in ways.items():
        scaler = VideoReformatter()
        samples = []
        for _ in range(5):
            started = time.thread_time()
            for picture in pictures:
                scaler.reformat(picture, interpolation=INTERPOLATION, threads=1, **options).to_ndarray()
            samples.append((time.thread_time() - started) / len(pictures) * 1000)
        result[name] = min(samples)
    return result


def worker(video: Path, n: int, out: Path) -> None:
    """Subprocess entry: run the command with timers, print what was measured as JSON."""
    timers = Timers()
    imports_started = time.perf_counter()
    import expvid.media.sampler  # noqa: F401  (what `expvid frames` imports when it runs)
    from expvid.cli.main import app

    imports = time.perf_counter() - imports_started
    instrument(timers)
    command = ["frames", str(video), "--num", str(n), "--size", "224", "--no-cache", "--out", str(out)]
    started, cpu_started = time.perf_counter(), time.process_time()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.suppress(SystemExit):
        app(command, prog_name="expvid")
    command_end = time.perf_counter()
    command_wall, command_cpu = command_end - started, time.process_time() - cpu_started
    stats = json.loads(printed.getvalue())["decode_stats"]
    split = colour_resize_split(timers.pictures, 224, 224)
    decode_wall = timers.decode_span[1] - timers.decode_span[0]
    from expvid.media.index import load_index

    result = {
        "packets": load_index(video).num_packets,
        "after_command": time.perf_counter() - command_end,  # the profiler's own work, not the command's
        "since_start": time.perf_counter() - STARTED,
        "imports": imports,
        "index": timers.wall.get("packet index", 0.0),
        "command_wall": command_wall,
        "command_cpu": command_cpu,
        "decode_wall": decode_wall,
        "cpu": dict(timers.cpu),
        "calls": dict(timers.calls),
        "workers": timers.workers,
        "idle_at_end": max(timers.ends) - min(timers.ends),
        "stats": stats,
        "split": split,
    }
    sys.stdout.write(json.dumps(result))


def spawn(video: Path, n: int, src: Path | None) -> dict[str, Any]:
    from sampling_cli import child_environment

    env = child_environment(src)
    with tempfile.TemporaryDirectory(prefix="expvid-profile-") as out:
        load = os.getloadavg()[0]
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--worker", "--video", str(video), "--n", str(n), "--out", out],
            capture_output=True,
            text=True,
            timeout=900,
            check=True,
            env=env,
        )
        wall = time.perf_counter() - started
    result: dict[str, Any] = json.loads(done.stdout)
    result["wall"], result["load"] = wall, load
    return result


def report(n: int, runs: list[dict[str, Any]]) -> None:
    def med(get: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(get(run) for run in runs)

    stats = runs[0]["stats"]
    decode_wall = med(lambda r: r["decode_wall"])
    rows: list[tuple[str, float | None, float | None, str]] = [
        ("start-up and exit", med(lambda r: r["wall"] - r["since_start"]), None, "interpreter, teardown"),
        ("imports", med(lambda r: r["imports"]), None, ""),
        ("packet index", med(lambda r: r["index"]), None, f"{runs[0]['packets']} packets"),
        (
            "decode phase",
            decode_wall,
            med(lambda r: sum(r["workers"])),
            f"{stats['workers']} decoder threads",
        ),
    ]
    per_part = {
        "demux": f"{stats['packets_demuxed']} packets read, {stats['packets_skipped']} not decoded",
        "seek": f"{stats['seeks']} seeks, {stats['units']} GOP runs",
        "decode": f"{stats['frames_decoded']} pictures, "
        f"{med(lambda r: r['cpu'].get('decode', 0)) / max(1, stats['frames_decoded']) * 1000:.2f} ms each",
        "colour + resize": f"{stats['frames_converted']} targets, "
        f"{med(lambda r: r['cpu'].get('colour + resize', 0)) / max(1, stats['frames_converted']) * 1000:.2f} ms each",
        "encode": f"{stats['frames_converted']} JPEGs, "
        f"{med(lambda r: r['cpu'].get('encode', 0)) / max(1, stats['frames_converted']) * 1000:.2f} ms each",
        "bookkeeping": "",
    }
    timed = [p for p in PARTS if p != "bookkeeping"]
    for part in PARTS:
        if part == "bookkeeping":
            # The worker threads' CPU not spent in any timed call (colour/encode run in them too).
            value = med(lambda r: sum(r["workers"]) - sum(r["cpu"].get(p, 0.0) for p in timed))
        else:
            value = med(lambda r, part=part: r["cpu"].get(part, 0.0))  # type: ignore[misc]
        rows.append((f"  {part}", None, value, per_part[part]))
    rest = med(lambda r: r["command_wall"] - r["index"] - r["decode_wall"])
    rows.append(("rest of the command", rest, None, "arguments, plan, threads, JSON, files"))
    total = med(lambda r: r["wall"] - r["after_command"])
    rows.append(("total (spawn to exit)", total, med(lambda r: r["command_cpu"]), "CPU: the command itself"))
    idle = med(lambda r: r["idle_at_end"])
    load = statistics.median(r["load"] for r in runs)
    print(f"\nN={n}: expvid frames VIDEO --num {n} --size 224 --no-cache --out DIR")
    print(f"median of {len(runs)} fresh processes, load average {load:.1f}")
    print("| part | wall s | CPU s | what |")
    print("|---|---|---|---|")
    for name, wall_s, cpu_s, what in rows:
        wall_text = f"{wall_s:.3f}" if wall_s is not None else ""
        cpu_text = f"{cpu_s:.3f}" if cpu_s is not None else ""
        print(f"| {name} | {wall_text} | {cpu_text} | {what} |")
    if stats["workers"] > 1:
        print(
            f"the first decoder to finish waited {idle:.3f} s for the last ({idle / decode_wall:.1%} of the phase)"
        )
    print("colour conversion and resize, the same decoded pictures converted three ways (ms per frame):")
    for name in runs[0]["split"]:
        print(f"  {name}: {statistics.median(r['split'][name] for r in runs):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ns", default="32,128")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--crf", type=int, default=21, help="x264 CRF of the video (see sampling_cli.py)")
    parser.add_argument("--src", type=Path, help="profile expvid imported from this src/ folder instead")
    parser.add_argument(
        "--nice", type=int, default=0, help="niceness of the profiled runs (see sampling_cli.py)"
    )
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--video", type=Path)
    parser.add_argument("--n", type=int)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.worker:
        worker(args.video, args.n, args.out)
        return
    sys.path.insert(0, str(HERE))
    from frame_sampling import ensure_video
    from sampling_cli import run_ahead

    run_ahead(args.nice)

    video = ensure_video(args.minutes, crf=args.crf)
    print(
        f"video: {video.name}; {os.cpu_count()} CPUs; load average at start {os.getloadavg()[0]:.1f}; "
        f"niceness {args.nice}; expvid from {args.src or 'this checkout'}"
    )
    ns = [int(n) for n in args.ns.split(",")]
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in ns}
    spawn(video, ns[0], args.src)  # untimed: bytecode written, libraries and the file in the page cache
    for _ in range(args.repeat):
        for n in ns:
            runs[n].append(spawn(video, n, args.src))
    for n in ns:
        report(n, runs[n])


if __name__ == "__main__":
    main()
