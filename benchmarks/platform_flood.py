"""Benchmark: reviewers' saves while strangers flood the sign-in form with wrong passwords.

Issue 18 measured, before the fix, 10 reviewers at 36.8 saves/s (p50 120 ms) fall to 1.3 saves/s
(p50 5.5 s) on SQLite when 8 anonymous clients sent wrong passwords from rotating addresses (the
hash ran inside the write transaction that checks the throttle), and to 4.2 saves/s with 1.27 GB of
server memory on PostgreSQL. The aim: saves within 20% of their unloaded rate.

One database (a SQLite file, or `--backend postgresql` on a throwaway cluster), `--items` Level-1
items assigned to `--reviewers` annotators whose passwords use the production argon2 cost. Each
phase starts a fresh `expvid platform serve` process (trusting X-Forwarded-For from loopback, as
behind a proxy) and runs the reviewers (loadtest.py: open the page, save a decision, in client
processes) for `--seconds`:

- `unloaded`: the reviewers alone;
- `flood`: the same, plus `--attackers` threads in another process, each looping GET /login +
  POST /login with a wrong password for a real account from a new random address every time (so the
  per-client throttle never applies: every attempt is hashed), with the defaults (1 hashing slot,
  nice 19, hashing at most half the time);
- alternatives, same flood: `flood share1` (the slot hashes without rest), `flood nice0 share1`
  (and at normal priority), `flood 4slots nice0 share1` (four at once).

Printed per phase: saves/s, save p50/p95, sign-in attempts/s by status, the server's peak memory
(VmHWM) and the ratio of saves/s to the unloaded phase.

Usage: python benchmarks/platform_flood.py [--backend sqlite|postgresql] [--seconds 20]
           [--reviewers 10] [--attackers 8] [--items 4000] [--phases unloaded,flood,...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from expvid.media.synth import scene_frame, write_video
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.loadtest import percentiles, run_load_processes, write_synthetic_candidates
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.errors import SYSTEM
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.users import add_user
from expvid.platform.testing import TemporaryPostgres, free_port

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
#: Phase -> (hash slots, nice, share) of the server; None: no flood (the defaults serve).
PHASES: dict[str, tuple[int, int, float] | None] = {
    "unloaded": None,
    "flood": (1, 19, 0.5),
    "flood share1": (1, 19, 1.0),
    "flood nice0 share1": (1, 0, 1.0),
    "flood 4slots nice0 share1": (4, 0, 1.0),
}


def _serve(db_url: str, port: int, log: Path, slots: int, nice: int, share: float) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-c", "from expvid.cli.platform import platform_app; platform_app()",
        "serve", "--db", db_url, "--port", str(port), "--proxy-header", "X-Forwarded-For",
        "--hash-slots", str(slots), "--hash-nice", str(nice), "--hash-share", str(share),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/login", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
        if process.poll() is not None:
            break
    process.terminate()
    raise RuntimeError(f"the server did not start; see {log}")


def _peak_memory_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return round(int(match.group(1)) / 1024, 1) if match else None


def _attacker(
    base_url: str, usernames: list[str], stop_at: float, seed: int, out: list[tuple[int, float]]
) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=120) as client:
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                page = client.get("/login")
                token = _TOKEN.search(page.text)
                address = f"{rng.randrange(1, 224)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
                response = client.post(
                    "/login",
                    data={"username": rng.choice(usernames), "password": f"guess-{rng.random()}",
                          "csrf_token": token.group(1) if token else ""},
                    headers={"X-Forwarded-For": address},
                )  # fmt: skip
                out.append((response.status_code, time.perf_counter() - started))
            except httpx.HTTPError:
                out.append((0, time.perf_counter() - started))


def _flood(args: tuple[str, list[str], int, float, float]) -> list[tuple[int, float]]:
    """`attackers` threads in their own process, from `start_at` (wall clock) for `seconds`."""
    base_url, usernames, attackers, start_at, seconds = args
    time.sleep(max(0.0, start_at - time.time()))
    stop_at = time.monotonic() + seconds
    results: list[tuple[int, float]] = []
    threads = [
        threading.Thread(target=_attacker, args=(base_url, usernames, stop_at, seed, results))
        for seed in range(attackers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def run_phase(
    name: str, url: str, work: Path, reviewers: list[tuple[str, str]], args: argparse.Namespace
) -> dict[str, Any]:
    setting = PHASES[name.removesuffix(" again")]
    slots, nice, share = setting or (1, 19, 0.5)
    port = free_port()
    server = _serve(url, port, work / "server.log", slots, nice, share)
    base_url = f"http://127.0.0.1:{port}"
    try:
        flood = None
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(1) if setting is not None else None
        allowance = 30.0
        if pool is not None:
            # The flood starts when the reviewers start saving (run_load_processes signs in first).
            start_at = time.time() + allowance
            flood = pool.apply_async(_flood, ((base_url, [r for r, _ in reviewers], args.attackers, start_at,
                                               args.seconds),))  # fmt: skip
        result = run_load_processes(
            base_url, reviewers, duration_s=args.seconds, processes=args.client_processes, race_every=0,
            sign_in_allowance_s=allowance,
        )  # fmt: skip
        attempts = flood.get() if flood is not None else []
        if pool is not None:
            pool.close()
            pool.join()
        memory = _peak_memory_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    saved = len(result.acknowledged)
    statuses = Counter(status for status, _ in attempts)
    return {
        "phase": name,
        "hash_slots": slots,
        "hash_nice": nice,
        "hash_share": share,
        "seconds": round(result.duration, 1),
        "saves": saved,
        "saves_per_s": round(saved / result.duration, 1) if result.duration else 0.0,
        "save_ms": percentiles(result.save_latencies),
        "page_ms": percentiles(result.page_latencies),
        "sign_in_attempts": len(attempts),
        "sign_ins_per_s": round(len(attempts) / args.seconds, 1),
        "sign_in_statuses": {str(k): v for k, v in sorted(statuses.items())},
        "sign_in_ms": percentiles([t for _, t in attempts]),
        "server_peak_mb": memory,
        "errors": result.errors[:5],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--attackers", type=int, default=8)
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument(
        "--phases", default=",".join(PHASES), help=f"comma-separated, of: {', '.join(PHASES)}"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = [p for p in phases if p.removesuffix(" again") not in PHASES]
    if unknown:
        parser.error(f"unknown phase(s): {', '.join(unknown)}")

    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="expvid-flood-")))
        if args.backend == "postgresql":
            url = stack.enter_context(TemporaryPostgres()).create_database("expvid_flood")
        else:
            url = f"sqlite:///{work / 'platform.db'}"
        upgrade_to_head(url)
        database = Database(url)
        stack.callback(database.dispose)
        clip = work / "clip.mp4"
        write_video(clip, (scene_frame(i, 96, 64) for i in range(20)), fps=10, preset="ultrafast")
        passwords = Passwords(PasswordPolicy())  # production cost: every wrong password costs what it would
        reviewers = [(f"reviewer{i:02d}", f"password-{i:02d}-long") for i in range(args.reviewers)]
        with database.write() as db:
            for name, password in reviewers:
                add_user(db, passwords, username=name, password=password, role="annotator", actor=SYSTEM)
        import_candidates(database, write_synthetic_candidates(work / "candidates", args.items, clip))
        print(f"{args.backend}: {args.items} items, {args.reviewers} reviewers, {args.attackers} attackers, "
              f"{args.seconds:g} s per phase", flush=True)  # fmt: skip
        rows = []
        for name in phases:
            row = run_phase(name, url, work, reviewers, args)
            rows.append(row)
            print(json.dumps(row), flush=True)
    unloaded = [r for r in rows if r["phase"].startswith("unloaded")]
    base = {"saves_per_s": sum(r["saves_per_s"] for r in unloaded) / len(unloaded)} if unloaded else None
    print(f"\n{'phase':<20} {'saves/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'vs unloaded':>11} "
          f"{'sign-ins/s':>10} {'server MB':>9}")  # fmt: skip
    for row in rows:
        ratio = f"{row['saves_per_s'] / base['saves_per_s']:.2f}" if base and base["saves_per_s"] else "-"
        row["ratio_to_unloaded"] = None if ratio == "-" else float(ratio)
        print(
            f"{row['phase']:<20} {row['saves_per_s']:>8} {row['save_ms']['p50']:>8} {row['save_ms']['p95']:>8} "
            f"{ratio:>11} {row['sign_ins_per_s']:>10} {row['server_peak_mb'] or '-':>9}  {row['sign_in_statuses']}"
        )
    if args.json:
        args.json.write_text(json.dumps({"backend": args.backend, "phases": rows}, indent=2) + "\n")
    return 0 if all(not r["errors"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
