"""The harness is never what the user waits for: `expvid eval` through the CLI, start-up and scoring included.

1,000 items of one task (`--tasks tools`) of a dataset the size of the ExpVid release (ten task
files, 6,945 records), against a loopback OpenAI-compatible server that answers after 200 ms, at
concurrency 32. Ideal: 1,000 x 0.2 / 32 = 6.25 s. The measured time is the whole command, from
process start to exit (imports, loading and fingerprinting the data, the requests, scoring with
bootstrap intervals, the table), frames already in the frame cache (a first run fills it) and no
response cache (replicated items would hit it). Target: within 1.3x of ideal, for both item shapes:

- `sample`: the bundled sample's clips (256x144 renders), frames at the paper's 224x224 (8 frames,
  about 9 KB of JPEG each);
- `level1`: the shape of ExpVid's Level-1 requests as users send them: 8 frames of 320x240
  (`--max-side 320`) from clips of a textured, grainy, panning lab scene with a moving vessel
  (x264 CRF 21, 3 B-frames, about 330 kbit/s), cut from one long video by ffmpeg stream copy as a
  release's clips are. About 22 KB of JPEG per frame, 240 KB of base64 per request. The clips
  (250 by default, items take them in turn, so no two requests in flight share frames) are
  generated once into benchmarks/.cache/ (about a minute).

    python benchmarks/cli_run.py [--shapes sample,level1] [--items 1000] [--records 6945]
        [--concurrency 32] [--delay 0.2] [--repeat 3] [--clips 250]

The shapes take turns (sample, level1, sample, ...), so both see the same load. Each run is also
split into its phases, read off predictions.jsonl from outside: start-up (process start to the
first request out), requests (to the last answer recorded) and scoring and exit; and the CPU of
the CLI process and of the loopback server over the run (the server shares this machine's cores,
as a real model server would not). The server runs in its own process and forgets the requests it
recorded (a test server keeps them, decoded frames included: gigabytes over a benchmark).
It also prints, for the same data, how long loading takes with and without `--tasks` (all ten
files parsed and validated vs. only the chosen one), so a regression is seen where it is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from expvid.suites.expvid_suite import EXPVID_TASKS
from expvid.suites.sample import make_sample

HERE = Path(__file__).resolve().parent
CACHE_DIR = HERE / ".cache"
SHAPES = ("sample", "level1")
#: The level1 clips: 320x240, 30 fps, 2 s each (one GOP), cut from one long render.
CLIP_W, CLIP_H, CLIP_FPS, CLIP_SECONDS = 320, 240, 30.0, 2
#: Where the level1 clips sit inside a benchmark dataset (relative to its root).
LEVEL1_DIR = "videos/level_1/bench"

SERVER = """
import sys, time
from expvid.fakes.models.server import LoopbackServer, Reply
server = LoopbackServer(Reply.slow("The answer is \\\\boxed{{A}}", {delay})).start()
print(server.openai_base_url, flush=True)
while True:  # a model server keeps nothing: forget recorded requests (and their decoded frames)
    time.sleep(0.5)
    server.reset()
"""


# -- the level1 clips --------------------------------------------------------------------------


def lab_frames(count: int) -> Iterator[np.ndarray]:
    """A panning bench scene with block texture, per-pixel grain and a moving vessel (320x240 JPEGs
    of it at q90 are ~23 KB, as frames of a real lab video are; flat renders compress to a quarter)."""
    from expvid.media.synth import scene_frame

    pan = CLIP_W
    rng = np.random.default_rng(7)
    texture = rng.integers(-14, 15, size=(CLIP_H // 2, (CLIP_W + pan) // 2, 1), dtype=np.int16)
    texture = np.repeat(np.repeat(texture, 2, axis=0), 2, axis=1)
    base = np.clip(scene_frame(0, CLIP_W + pan, CLIP_H, fps=CLIP_FPS).astype(np.int16) + texture, 0, 255)
    grain = [rng.integers(-5, 6, size=(CLIP_H, CLIP_W, 1), dtype=np.int16) for _ in range(8)]
    vessel_w, vessel_h = CLIP_W // 10, CLIP_H // 5
    for index in range(count):
        t = index / CLIP_FPS
        offset = int(pan / 2 + pan / 2 * math.sin(2 * math.pi * t / 37.0))
        frame = np.clip(base[:, offset : offset + CLIP_W] + grain[index % 8], 0, 255).astype(np.uint8)
        cx = int((0.2 + 0.6 * (0.5 + 0.5 * math.sin(0.7 * t))) * CLIP_W)
        y0 = int(CLIP_H * 0.7) - vessel_h
        frame[y0 : y0 + vessel_h, max(0, cx - vessel_w // 2) : cx + vessel_w // 2] = (60, 140, 220)
        yield frame


def ensure_clips(count: int) -> list[Path]:
    """`count` level1 clips in benchmarks/.cache/, made once: one long render encoded with x264, cut
    into 2-second clips by `ffmpeg -c copy -f segment` (each clip starts at its own keyframe)."""
    from expvid.media.synth import write_video

    directory = CACHE_DIR / f"level1_{CLIP_W}x{CLIP_H}_{count}clips"
    clips = [directory / f"clip_{index:04d}.mp4" for index in range(count)]
    if all(clip.exists() for clip in clips):
        return clips
    print(f"generating {count} level1 clips into {directory}, once ...", file=sys.stderr)
    started = time.perf_counter()
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    gop = int(CLIP_FPS * CLIP_SECONDS)
    long_video = partial / "long.mp4"
    write_video(long_video, lab_frames(count * gop), fps=CLIP_FPS, gop=gop, bframes=3, crf=21)
    subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(long_video), "-c", "copy", "-map", "0:v", "-f", "segment",
         "-segment_time", str(CLIP_SECONDS), "-reset_timestamps", "1", str(partial / "clip_%04d.mp4")],
        check=True,
    )  # fmt: skip
    long_video.unlink()
    made = sorted(partial.glob("clip_*.mp4"))
    if len(made) < count:
        raise RuntimeError(f"ffmpeg cut {len(made)} clips, wanted {count}")
    shutil.rmtree(directory, ignore_errors=True)
    partial.rename(directory)
    print(f"  done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return clips


# -- the dataset -------------------------------------------------------------------------------


def build_dataset(sample: Path, target: Path, tools: int, records: int, clips: list[Path]) -> None:
    """`tools` items in tools.jsonl and the rest of `records` spread over the other nine task files,
    every record a sample record with a new id (same clips). With `clips`, the tools items take
    them in turn instead of the sample's (the level1 shape)."""
    by_task = {
        spec.name: [json.loads(line) for line in (sample / spec.path).read_text().splitlines()]
        for spec in EXPVID_TASKS
    }
    others = [spec for spec in EXPVID_TASKS if spec.name != "tools"]
    share = (records - tools) // len(others)
    counts = {"tools": tools, **{spec.name: share for spec in others}}
    counts[others[0].name] += records - tools - share * len(others)
    for spec in EXPVID_TASKS:
        pool = by_task[spec.name]
        rows = []
        for i in range(counts[spec.name]):
            row = dict(pool[i % len(pool)], id=f"{pool[i % len(pool)]['id']}-r{i}")
            if clips and spec.name == "tools":
                row["video_path"] = f"{LEVEL1_DIR}/{clips[i % len(clips)].name}"
            rows.append(json.dumps(row))
        (target / spec.path).parent.mkdir(parents=True, exist_ok=True)
        (target / spec.path).write_text("\n".join(rows) + "\n")
    videos = target / "videos"
    if not clips:
        videos.symlink_to(sample / "videos")
        return
    # The sample's clips by level, beside a folder holding the level1 clips.
    for level in (sample / "videos").iterdir():
        (videos / level.name).mkdir(parents=True)
        for entry in level.iterdir():
            (videos / level.name / entry.name).symlink_to(entry)
    (target / LEVEL1_DIR).symlink_to(clips[0].parent)


def start_server(delay: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(delay=delay)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise RuntimeError("loopback server did not start")
    return process, url


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Measured:
    """One `expvid eval` process, timed from outside: its phases are read off predictions.jsonl."""

    wall: float
    cpu: float  # the CLI process, user + system
    before: float  # start to the first request out (first prediction line less one server delay)
    generation: float  # first request out to last prediction line
    after: float  # last prediction line to exit (scoring, reports, shutdown)
    server_cpu: float | None  # the loopback server's CPU meanwhile (it shares this machine's cores)
    load: float


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of a running process, from /proc (None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli_eval(
    data: Path, url: str, out: Path, cache: Path, args: argparse.Namespace, extra: list[str], server: int
) -> Measured:
    """One `expvid eval` process, measured; raises with its output if it fails."""
    command = [
        sys.executable, "-m", "expvid.cli.main", "eval", "--data", str(data), "--tasks", "tools",
        "--model", f"openai:loopback@{url}", "--out", str(out), "--concurrency", str(args.concurrency),
        "--cache-dir", str(cache), "--backend-option", "cache_dir=null", "--backend-option", "max_retries=0",
        "--quiet", *extra,
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_before = process_cpu(server)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "200"}
        )
        first, last, size = None, None, 0
        predictions = out / "predictions.jsonl"
        while process.poll() is None:  # a stat every 5 ms: when the first and the last answers landed
            try:
                grown = predictions.stat().st_size
            except FileNotFoundError:
                grown = 0
            if grown != size:
                size, last = grown, time.perf_counter() - started
                first = last if first is None else first
            time.sleep(0.005)
        elapsed = time.perf_counter() - started
        if process.returncode != 0:
            output.seek(0)
            raise RuntimeError(
                f"expvid eval failed ({process.returncode}):\n{output.read()[-3000:].decode()}"
            )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_after = process_cpu(server)
    if first is None or last is None:
        raise RuntimeError(f"expvid eval wrote no predictions in {out}")
    return Measured(
        wall=elapsed,
        cpu=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        before=max(0.0, first - args.delay),
        generation=last - first + args.delay,
        after=elapsed - last,
        server_cpu=None if server_before is None or server_after is None else server_after - server_before,
        load=os.getloadavg()[0],
    )


def request_shape(run: Path) -> str:
    """Frames per request and their size, read back from the run's first prediction."""
    first = json.loads((run / "predictions.jsonl").read_text().splitlines()[0])
    sent = first.get("sent", {})
    side = f"max_side {sent['max_side']}" if sent.get("max_side") else f"size {sent.get('size')}"
    return f"{first.get('n_images')} frames per request ({side})"


def load_times(data: Path) -> tuple[float, float]:
    """Seconds to load the dataset with every task, and with `tasks=["tools"]` (fresh processes)."""
    code = (
        "import time, sys; from expvid.suites.registry import get_suite; s = get_suite('expvid'); "
        "t = time.perf_counter(); d = s.load(sys.argv[1], tasks={tasks}, check_media=False); d.fingerprint(); "
        "print(time.perf_counter() - t)"
    )
    result = []
    for tasks in ("None", "['tools']"):
        done = subprocess.run(
            [sys.executable, "-c", code.format(tasks=tasks), str(data)],
            capture_output=True,
            text=True,
            check=True,
        )
        result.append(float(done.stdout.strip()))
    return result[0], result[1]


@dataclass
class Shape:
    """One item shape: its dataset, frame cache and CLI options, and the runs measured on it."""

    name: str
    data: Path
    cache: Path
    extra: list[str]
    runs: list[Measured] = field(default_factory=list)
    described: str = ""
    frame_bytes: float = float("nan")

    def median(self, what: str) -> float:
        values = [getattr(run, what) for run in self.runs]
        return statistics.median(value for value in values if value is not None) if values else math.nan


def frame_bytes(cache: Path) -> float:
    """Mean bytes of one cached frame (the JPEG that goes out base64-encoded)."""
    from expvid.media.cache import FrameCache

    frames = FrameCache(cache / "frames")  # what `--cache-dir` holds: frames/ (and responses/)
    sizes = []
    for path in sorted(frames.frames_dir.rglob("*.bin"))[:50]:
        entry = frames.load(path.stem)
        sizes += [len(blob) for blob in entry.blobs] if entry is not None else []
    return statistics.mean(sizes) if sizes else float("nan")


def prepare_shape(name: str, root: Path, args: argparse.Namespace, url: str, server: int) -> Shape:
    """The shape's dataset, and a first run that fills its frame cache (not measured)."""
    clips = ensure_clips(args.clips) if name == "level1" else []
    shape = Shape(
        name=name,
        data=root / f"data-{name}",
        cache=root / f"cache-{name}",
        extra=["--max-side", "320"] if name == "level1" else [],
    )
    build_dataset(root / "sample", shape.data, args.items, args.records, clips)
    prime = root / f"prime-{name}"
    cli_eval(shape.data, url, prime, shape.cache, args, shape.extra, server)
    shape.described = request_shape(prime)
    shape.frame_bytes = frame_bytes(shape.cache)
    return shape


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shapes", default=",".join(SHAPES), help="sample, level1 or both")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--records", type=int, default=6945)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clips", type=int, default=250, help="distinct level1 clips")
    args = parser.parse_args()
    shapes = [shape.strip() for shape in args.shapes.split(",") if shape.strip()]
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown or not shapes:
        parser.error(f"--shapes takes {', '.join(SHAPES)}; got {args.shapes!r}")

    with tempfile.TemporaryDirectory(prefix="expvid-cli-bench-") as temp:
        root = Path(temp)
        make_sample(root / "sample")
        server, url = start_server(args.delay)
        try:
            measured = [prepare_shape(name, root, args, url, server.pid) for name in shapes]
            for repeat in range(args.repeat):  # shapes take turns, so both see the same load
                for shape in measured:
                    out = root / f"run-{shape.name}-{repeat}"
                    shape.runs.append(
                        cli_eval(shape.data, url, out, shape.cache, args, shape.extra, server.pid)
                    )
            everything, chosen = load_times(measured[-1].data)
        finally:
            server.kill()
            shutil.rmtree(root, ignore_errors=True)

    ideal = args.items * args.delay / args.concurrency
    print(f"items: {args.items} of tools, dataset {args.records} records in 10 task files")
    print(f"concurrency: {args.concurrency}  server delay: {args.delay * 1000:.0f} ms  ideal: {ideal:.2f} s")
    for shape in measured:
        tag = f"[{shape.name}]"
        print(f"{tag} {shape.described}, {shape.frame_bytes / 1000:.1f} KB per JPEG frame")
        print(f"{tag} runs (s): " + ", ".join(f"{run.wall:.2f}" for run in shape.runs))
        print(
            f"{tag} CLI run: median {shape.median('wall'):.2f} s  ratio to ideal "
            f"{shape.median('wall') / ideal:.3f}  (best {min(run.wall for run in shape.runs) / ideal:.3f}; "
            "target <= 1.3)"
        )
        print(
            f"{tag} phases (medians): start-up {shape.median('before'):.2f} s, requests "
            f"{shape.median('generation'):.2f} s ({shape.median('generation') / ideal:.3f} of ideal), "
            f"scoring and exit {shape.median('after'):.2f} s"
        )
        cpu, server_cpu = shape.median("cpu"), shape.median("server_cpu")
        print(
            f"{tag} CPU per run (medians): client {cpu:.2f} s ({cpu / args.items * 1000:.2f} ms per item, "
            f"start-up and scoring included), loopback server {server_cpu:.2f} s; load average "
            f"{shape.median('load'):.1f} on {os.cpu_count()} CPUs"
        )
    print(
        f"loading: all ten files {everything:.2f} s, --tasks tools {chosen:.2f} s ({everything / chosen:.1f}x)"
    )
    print("(a busy machine stretches the wall time more than the CPU time; the server shares the cores)")
    sys.exit(0 if all(shape.median("wall") / ideal <= 1.3 for shape in measured) else 1)


if __name__ == "__main__":
    main()
