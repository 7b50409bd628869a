"""Runner throughput: 1,000 sample items against a loopback OpenAI-compatible server that answers
after 200 ms, at concurrency 32. The run must finish within 1.2x of the ideal 1000 x 0.2 / 32 s.

Also measured: the same run with frames not yet cached (cold decode), and the overhead per item
when every response is already in the cache (no model call at all).

    python benchmarks/runner_throughput.py [--items 1000] [--concurrency 32] [--delay 0.2]

The server runs in its own process (as a real model server would), so its work is not charged to
the runner's event loop. Items are the bundled sample's, replicated with new ids (same clips).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.suites.expvid_suite import EXPVID_TASKS
from expvid.suites.sample import make_sample

SERVER = """
import sys, time
from expvid.fakes.models.server import LoopbackServer, Reply
server = LoopbackServer(Reply.slow("The answer is \\\\boxed{{A}}", {delay})).start()
print(server.openai_base_url, flush=True)
while True:
    time.sleep(3600)
"""


def replicate(sample: Path, target: Path, n_items: int) -> int:
    """A dataset of `n_items` items: the sample's, repeated round-robin with new ids."""
    records: dict[str, list[dict[str, object]]] = {}
    for spec in EXPVID_TASKS:
        if spec.level == 3:  # Level-3 items need a judge, which is not part of the request path
            continue
        lines = (sample / spec.path).read_text().splitlines()
        records[spec.path] = [json.loads(line) for line in lines]
    pools = [(path, record) for path, rows in records.items() for record in rows]
    out: dict[str, list[str]] = {path: [] for path in records}
    for index in range(n_items):
        path, record = pools[index % len(pools)]
        copy = dict(record, id=f"{record['id']}-r{index}")
        out[path].append(json.dumps(copy, ensure_ascii=False))
    for path, lines in out.items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text("\n".join(lines) + ("\n" if lines else ""))
    (target / "videos").symlink_to(sample / "videos")
    return n_items


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


def run(data: Path, url: str, out: Path, cache: Path, concurrency: int, *, responses: bool) -> float:
    config = EvalConfig(
        data=data,
        model=f"openai:loopback@{url}",
        out=out,
        concurrency=concurrency,
        cache_dir=cache,
        cache_responses=responses,
        n_bootstrap=0,
        backend_options={"max_retries": 0},
    )
    started = time.perf_counter()
    asyncio.run(evaluate(config, command=["bench"], show_progress=False))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="expvid-bench-") as temp:
        root = Path(temp)
        make_sample(root / "sample")
        data = root / "data"
        replicate(root / "sample", data, args.items)
        n = args.items
        server, url = start_server(args.delay)
        try:
            cache = root / "cache"
            cold = run(data, url, root / "cold", cache, args.concurrency, responses=False)
            # Replicated items repeat identical requests, so the measured runs keep no response cache.
            warm = run(data, url, root / "warm", cache, args.concurrency, responses=False)
            run(data, url, root / "prime", cache, args.concurrency, responses=True)
            cached = run(data, url, root / "cached", cache, args.concurrency, responses=True)
        finally:
            server.kill()
            shutil.rmtree(root, ignore_errors=True)

    ideal = n * args.delay / args.concurrency
    print(f"items: {n}  concurrency: {args.concurrency}  server delay: {args.delay * 1000:.0f} ms")
    print(f"ideal (n x delay / concurrency): {ideal:.2f} s")
    print(f"frames warm, model called:  {warm:.2f} s  ratio to ideal {warm / ideal:.3f}  (target <= 1.2)")
    print(f"frames cold, model called:  {cold:.2f} s  ratio to ideal {cold / ideal:.3f}")
    print(f"all responses cached:       {cached:.2f} s  overhead {cached / n * 1000:.2f} ms per item")
    sys.exit(0 if warm / ideal <= 1.2 else 1)


if __name__ == "__main__":
    main()
