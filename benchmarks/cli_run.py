"""The harness is never what the user waits for: `expvid eval` through the CLI, start-up and scoring included.

1,000 items of one task (`--tasks tools`) of a dataset the size of the ExpVid release (ten task
files, 6,945 records), against a loopback OpenAI-compatible server that answers after 200 ms, at
concurrency 32. Ideal: 1,000 x 0.2 / 32 = 6.25 s. The measured time is the whole command, from
process start to exit (imports, loading and fingerprinting the data, the requests, scoring with
bootstrap intervals, the table), frames already in the frame cache (a first run fills it) and no
response cache (replicated items would hit it). Target: within 1.3x of ideal.

    python benchmarks/cli_run.py [--items 1000] [--records 6945] [--concurrency 32] [--delay 0.2] [--repeat 3]

It also prints, for the same data, how long loading takes with and without `--tasks` (all ten
files parsed and validated vs. only the chosen one), so a regression is seen where it is.
The server runs in its own process, as a real model server would.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from expvid.suites.expvid_suite import EXPVID_TASKS
from expvid.suites.sample import make_sample

SERVER = """
import sys, time
from expvid.models.loopback import LoopbackServer, Reply
server = LoopbackServer(Reply.slow("The answer is \\\\boxed{{A}}", {delay})).start()
print(server.openai_base_url, flush=True)
while True:
    time.sleep(3600)
"""


def build_dataset(sample: Path, target: Path, tools: int, records: int) -> None:
    """`tools` items in tools.jsonl and the rest of `records` spread over the other nine task files,
    every record a sample record with a new id (same clips)."""
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
        lines = [
            json.dumps(dict(pool[i % len(pool)], id=f"{pool[i % len(pool)]['id']}-r{i}"))
            for i in range(counts[spec.name])
        ]
        (target / spec.path).parent.mkdir(parents=True, exist_ok=True)
        (target / spec.path).write_text("\n".join(lines) + "\n")
    (target / "videos").symlink_to(sample / "videos")


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


def cli_eval(data: Path, url: str, out: Path, cache: Path, concurrency: int) -> tuple[float, float]:
    """(wall time, CPU seconds) of one `expvid eval` process; raises with its output if it fails."""
    command = [
        sys.executable, "-m", "expvid.cli.main", "eval", "--data", str(data), "--tasks", "tools",
        "--model", f"openai:loopback@{url}", "--out", str(out), "--concurrency", str(concurrency),
        "--cache-dir", str(cache), "--backend-option", "cache_dir=null", "--backend-option", "max_retries=0",
        "--quiet",
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(
            f"expvid eval failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--records", type=int, default=6945)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="expvid-cli-bench-") as temp:
        root = Path(temp)
        make_sample(root / "sample")
        data = root / "data"
        build_dataset(root / "sample", data, args.items, args.records)
        server, url = start_server(args.delay)
        try:
            cache = root / "cache"
            cli_eval(data, url, root / "prime", cache, args.concurrency)  # fills the frame cache
            measured = [
                cli_eval(data, url, root / f"run{i}", cache, args.concurrency) for i in range(args.repeat)
            ]
            times = [wall for wall, _ in measured]
            cpus = [cpu for _, cpu in measured]
            everything, chosen = load_times(data)
        finally:
            server.kill()
            shutil.rmtree(root, ignore_errors=True)

    ideal = args.items * args.delay / args.concurrency
    best, median = min(times), statistics.median(times)
    print(f"items: {args.items} of tools, dataset {args.records} records in 10 task files")
    print(f"concurrency: {args.concurrency}  server delay: {args.delay * 1000:.0f} ms  ideal: {ideal:.2f} s")
    print("runs (s): " + ", ".join(f"{t:.2f}" for t in times))
    print(
        f"CLI run: median {median:.2f} s  ratio to ideal {median / ideal:.3f}  (best {best / ideal:.3f}; target <= 1.3)"
    )
    print(
        f"loading: all ten files {everything:.2f} s, --tasks tools {chosen:.2f} s ({everything / chosen:.1f}x)"
    )
    cpu = statistics.median(cpus)
    print(
        f"client CPU per run: median {cpu:.2f} s ({cpu / args.items * 1000:.2f} ms per item, start-up and "
        f"scoring included); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
        "(a busy machine stretches the wall time more than the CPU time)"
    )
    sys.exit(0 if median / ideal <= 1.3 else 1)


if __name__ == "__main__":
    main()
