"""Benchmark: how long `expvid` takes to start, with commands loaded lazily vs all up front.

Each case runs in a fresh interpreter, `--repeats` times; the table shows the fastest and the
median wall time, the CPU time of the fastest run, and eager / lazy. "eager" imports every command
module before running, which is what `expvid` did before commands were registered lazily (and it
then also imported every `expvid.media` module on `import expvid.media`, so the old cost was a
little higher still). `python -c pass` and `import typer` are the floor any Typer CLI pays.

Cases: `expvid --help`, `expvid --version`, `expvid frames --help`, `expvid eval --help` (45 options; before its options
were resolved in `expvid.run.eval_options` it imported the runner and took 2.3 s), and
`expvid frames VIDEO --num 8 --no-cache` on a
3 s 320x180 clip (decoding included: what a user waits for). The target is 0.3 s for these.

Usage: python benchmarks/cli_startup.py [--repeats 7]
Wall times on a shared, loaded machine mean little: compare the ratios and the CPU times.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.3

LAZY = """
import sys
from expvid.cli.main import app
app(sys.argv[1:], prog_name="expvid")
"""

EAGER = """
import sys
from expvid.cli.main import COMMANDS, app
for command in COMMANDS.values():
    command.load()
app(sys.argv[1:], prog_name="expvid")
"""


def _run(code: str, args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one fresh interpreter running `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed: {args}\n{done.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _measure(code: str, args: list[str], repeats: int) -> dict[str, float]:
    _run(code, args)  # warm the OS file cache
    runs = [_run(code, args) for _ in range(repeats)]
    fastest = min(runs)
    return {"min": fastest[0], "median": statistics.median(wall for wall, _ in runs), "cpu": fastest[1]}


def _make_clip(directory: Path) -> Path:
    from expvid.media.synth import scene_frame, write_video

    path = directory / "clip.mp4"
    write_video(path, (scene_frame(i, 320, 180) for i in range(90)), fps=30.0, gop=30)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    os.environ.setdefault("COLUMNS", "100")
    with tempfile.TemporaryDirectory() as tmp:
        clip = _make_clip(Path(tmp))
        floor = {
            "python -c pass": _measure("pass", [], options.repeats),
            "import typer": _measure("import typer.main", [], options.repeats),
        }
        cases = {
            "expvid --help": ["--help"],
            "expvid --version": ["--version"],
            "expvid frames --help": ["frames", "--help"],
            "expvid eval --help": ["eval", "--help"],
            "expvid frames CLIP -n 8": ["frames", str(clip), "--num", "8", "--no-cache"],
        }
        print(f"{'case':<26}{'mode':<7}{'min s':>8}{'median s':>10}{'cpu s':>8}{'eager/lazy':>12}")
        for name, result in floor.items():
            print(f"{name:<26}{'':<7}{result['min']:>8.3f}{result['median']:>10.3f}{result['cpu']:>8.3f}")
        for name, args in cases.items():
            lazy = _measure(LAZY, args, options.repeats)
            eager = _measure(EAGER, args, options.repeats)
            ratio = eager["min"] / lazy["min"]
            verdict = "ok" if lazy["min"] < TARGET_S else f"over {TARGET_S} s"
            for mode, result in (("lazy", lazy), ("eager", eager)):
                print(
                    f"{name:<26}{mode:<7}{result['min']:>8.3f}{result['median']:>10.3f}{result['cpu']:>8.3f}"
                    + (f"{ratio:>11.2f}x  {verdict}" if mode == "lazy" else "")
                )


if __name__ == "__main__":
    main()
