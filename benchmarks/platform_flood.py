"""Benchmark: strangers flood the sign-in form; does the owner still get in, and do saves go on?

Issue 18 measured, before hashing left the transactions, 10 reviewers at 36.8 saves/s fall to
1.3 saves/s on SQLite when 8 anonymous clients sent wrong passwords from rotating addresses. Issue
29 found the next limit: behind a proxy, 80 such clients filled the one first-come hashing queue and
the platform's owner, with the right password, got 503 three times out of three (8 clients: her
sign-in took 2.7-3.4 s instead of 0.2-0.4 s). The aims: the owner signs in within 2 s, and saves
stay within 20% of their unloaded rate, with 8 and with 80 flooders, on SQLite and PostgreSQL.

Per backend (`--backends`, default both: a SQLite file and a throwaway PostgreSQL cluster), one
database with `--items` Level-1 items assigned to `--reviewers` annotators, an admin `owner` and an
adjudicator `newcomer`, all with passwords at the production argon2 cost. The owner signed in once
from her own computer (198.51.100.7) before the benchmark, as on any working day. Each phase starts
a fresh `expvid platform serve` (trusting X-Forwarded-For from loopback, as behind a proxy) and runs
the reviewers (loadtest.py: open a page, save a decision, in client processes) for `--seconds`:

- `unloaded`: the reviewers alone;
- `flood N` (N in `--attackers`, default 8 and 80): plus N clients in another process (asyncio, plain
  HTTP/1.1, at nice 10: they stand in for machines elsewhere), each looping GET /login + POST
  /login with a wrong password for a real account (the reviewers' and the owner's) from a new random
  address every time, so no per-client throttle ever applies;
- while the flood runs, every 4 s: the owner signs in from her computer (GET + POST /login, timed),
  and, independently, `newcomer` (an account nobody attacks) from an address never seen before
  (random in 198.18.0.0/15: until issue 29's fix the addresses repeated across phases, so from the
  second flood phase on the "newcomer" was a known pair in the trusted lane).

Alternatives, same flood: `flood N share1` (the shared slot hashes without rest), `flood N nice0
share1` (and at normal priority). Printed per phase and backend: saves/s and the ratio to the
unloaded phase, save p50/p95, the owner's and the newcomer's sign-in times (p50, max) and failures,
attempts/s by status, the server's peak memory (VmHWM) and CPU seconds, and the machine's load
average (on a shared machine other work competes for the same cores: compare runs at like loads).

Usage: python benchmarks/platform_flood.py [--backends sqlite,postgresql] [--seconds 20]
           [--reviewers 10] [--attackers 8,80] [--items 4000] [--phases unloaded,flood] [--rounds 1]
           [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
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
from urllib.parse import urlencode

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
#: Server settings per kind of phase: (hash slots, nice, share); None: no flood.
SETTINGS: dict[str, tuple[int, int, float] | None] = {
    "unloaded": None,
    "flood": (1, 19, 0.5),
    "flood share1": (1, 19, 1.0),
    "flood nice0 share1": (1, 0, 1.0),
}
OWNER = ("owner", "owner-passphrase-2027")
NEWCOMER = ("newcomer", "newcomer-passphrase-2027")
OWNER_ADDRESS = "198.51.100.7"
#: Time the reviewers get to sign in before the flood and the saves start.
ALLOWANCE_S = 15.0


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


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:  # connections still open after a failed phase
        server.kill()
        server.wait(timeout=30)


def _peak_memory_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return round(int(match.group(1)) / 1024, 1) if match else None


def sign_in_once(base_url: str, username: str, password: str, address: str) -> tuple[int, float]:
    """One sign-in as a browser makes it (GET the form, POST it): (status, seconds)."""
    started = time.perf_counter()
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=120) as client:
        try:
            page = client.get("/login", headers={"X-Forwarded-For": address})
            token = _TOKEN.search(page.text)
            response = client.post(
                "/login",
                data={
                    "username": username,
                    "password": password,
                    "csrf_token": token.group(1) if token else "",
                },
                headers={"X-Forwarded-For": address},
            )
            status = response.status_code
        except httpx.HTTPError:
            status = 0
    return status, time.perf_counter() - started


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: str
) -> tuple[int, dict[str, str], str]:
    """One HTTP/1.1 request on a kept-alive connection: (status, headers, body)."""
    writer.write(request.encode())
    await writer.drain()
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed")
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    cookies = []
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
        if name.strip().lower() == "set-cookie":
            cookies.append(value.strip().split(";", 1)[0])
    headers["set-cookie"] = "; ".join(cookies)
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body.decode("utf-8", "replace")


async def _attacker(
    port: int, usernames: list[str], stop_at: float, seed: int, out: list[tuple[int, float]]
) -> None:
    """GET /login, POST a wrong password for a real account, from a new random address each time.
    Plain HTTP/1.1 on asyncio streams: the flooders' own CPU stays small next to the server's."""
    rng = random.Random(seed)
    connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while time.monotonic() < stop_at:
        started = time.perf_counter()
        address = f"{rng.randrange(1, 224)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        try:
            if connection is None:
                connection = await asyncio.open_connection("127.0.0.1", port)
            reader, writer = connection
            head = f"Host: 127.0.0.1:{port}\r\nX-Forwarded-For: {address}\r\n"
            _, headers, page = await _exchange(reader, writer, f"GET /login HTTP/1.1\r\n{head}\r\n")
            token = _TOKEN.search(page)
            form = urlencode({"username": rng.choice(usernames), "password": f"guess-{rng.random()}",
                              "csrf_token": token.group(1) if token else ""})  # fmt: skip
            status, answer, _ = await _exchange(
                reader, writer,
                f"POST /login HTTP/1.1\r\n{head}Cookie: {headers['set-cookie']}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(form)}\r\n\r\n{form}",
            )  # fmt: skip
            out.append((status, time.perf_counter() - started))
            if answer.get("connection", "").lower() == "close":
                writer.close()
                connection = None
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
            out.append((0, time.perf_counter() - started))
            if connection is not None:
                connection[1].close()
            connection = None
    if connection is not None:
        connection[1].close()


def _flood(args: tuple[int, list[str], int, float, float]) -> tuple[list[tuple[int, float]], float, float]:
    """`attackers` clients in their own process, from `start_at` (wall clock) for `seconds`; returns
    their answers, the process's CPU seconds and how long it ran (a flooder waits for the answer to
    its last attempt, which a full lane may give long after `seconds`). The process runs at nice
    10: the flooders stand in for clients on other machines, whose CPU is not the server's."""
    port, usernames, attackers, start_at, seconds = args
    with contextlib.suppress(OSError):
        os.nice(10)
    time.sleep(max(0.0, start_at - time.time()))
    stop_at = time.monotonic() + seconds
    results: list[tuple[int, float]] = []

    async def run() -> None:
        await asyncio.gather(
            *(_attacker(port, usernames, stop_at, seed, results) for seed in range(attackers))
        )

    started = time.monotonic()
    asyncio.run(run())
    return results, time.process_time(), time.monotonic() - started


def _person(base_url: str, who: str, start_at: float, seconds: float, out: list[tuple[int, float]]) -> None:
    """The owner from her computer, or the newcomer from a new address each time, every 4 s.

    The newcomer's addresses are drawn at random from 198.18.0.0/15 (benchmarking addresses), so
    that none repeats across phases: an address it signed in from in an earlier phase would make
    it a known pair there (the trusted lane), and the phase would no longer measure a newcomer."""
    time.sleep(max(0.0, start_at - time.time() + 1.0))
    stop_at = time.monotonic() + seconds - 2.0
    rng = random.SystemRandom()
    while time.monotonic() < stop_at:
        if who == "owner":
            out.append(sign_in_once(base_url, *OWNER, OWNER_ADDRESS))
        else:
            address = f"198.{rng.randrange(18, 20)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            out.append(sign_in_once(base_url, *NEWCOMER, address))
        time.sleep(max(0.0, 4.0 - out[-1][1]))


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _times(samples: list[tuple[int, float]]) -> dict[str, Any]:
    times = [t for _, t in samples]
    return {
        "tries": len(samples),
        "failed": sum(1 for status, _ in samples if status != 303),
        "p50_s": round(sorted(times)[len(times) // 2], 2) if times else None,
        "max_s": round(max(times), 2) if times else None,
    }


def run_phase(
    name: str, url: str, work: Path, reviewers: list[tuple[str, str]], args: argparse.Namespace
) -> dict[str, Any]:
    kind, attackers = _parse_phase(name)
    setting = SETTINGS[kind]
    slots, nice, share = setting or (1, 19, 0.5)
    port = free_port()
    server = _serve(url, port, work / "server.log", slots, nice, share)
    base_url = f"http://127.0.0.1:{port}"
    people: dict[str, list[tuple[int, float]]] = {"owner": [], "newcomer": []}
    try:
        flood = None
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(1) if setting is not None else None
        start_at = time.time() + ALLOWANCE_S  # the reviewers sign in first (run_load_processes)
        watchers = []
        if pool is not None:
            targets = [r for r, _ in reviewers] + [OWNER[0]]
            flood = pool.apply_async(_flood, ((port, targets, attackers, start_at, args.seconds),))
            watchers = [
                threading.Thread(target=_person, args=(base_url, who, start_at, args.seconds, people[who]))
                for who in people
            ]
            for watcher in watchers:
                watcher.start()
        cpu_before = _cpu_seconds(server.pid)
        result = run_load_processes(
            base_url, reviewers, duration_s=args.seconds, processes=args.client_processes, race_every=0,
            sign_in_allowance_s=ALLOWANCE_S,
        )  # fmt: skip
        cpu_after = _cpu_seconds(server.pid)
        load = os.getloadavg()[0]
        attempts, flood_cpu, flood_s = flood.get() if flood is not None else ([], 0.0, 0.0)
        for watcher in watchers:
            watcher.join()
        if pool is not None:
            pool.close()
            pool.join()
        memory = _peak_memory_mb(server.pid)
    finally:
        _stop(server)
    saved = len(result.acknowledged)
    hashing = re.findall(r"sign-in hashing: (.*)", (work / "server.log").read_text(errors="replace"))
    statuses = Counter(status for status, _ in attempts)
    return {
        "phase": name,
        "hash_slots": slots,
        "hash_nice": nice,
        "hash_share": share,
        "attackers": attackers,
        "seconds": round(result.duration, 1),
        "saves": saved,
        "saves_per_s": round(saved / result.duration, 1) if result.duration else 0.0,
        "save_ms": percentiles(result.save_latencies),
        "page_ms": percentiles(result.page_latencies),
        "owner_sign_in": _times(people["owner"]),
        "newcomer_sign_in": _times(people["newcomer"]),
        "sign_in_attempts": len(attempts),
        "sign_ins_per_s": round(len(attempts) / flood_s, 1) if flood_s else 0.0,
        "sign_in_statuses": {str(k): v for k, v in sorted(statuses.items())},
        "server_peak_mb": memory,
        # Server CPU over the whole phase (sign-ins of the reviewers included) and the machine's
        # 1-minute load average at its end: on a shared machine, other work competes too.
        "server_cpu_s": round(cpu_after - cpu_before, 1)
        if cpu_after is not None and cpu_before is not None
        else None,
        "load_average": round(load, 1),
        "flooders_cpu_s": round(flood_cpu, 1),
        # The server's own account at its stop, per lane: hashed, shed, longest wait and hash.
        "hashing": hashing[-1] if hashing else None,
        "errors": result.errors[:5],
    }


def _parse_phase(name: str) -> tuple[str, int]:
    """ "flood 80 share1" -> ("flood share1", 80); "unloaded" -> ("unloaded", 0)."""
    words = name.split()
    numbers = [w for w in words if w.isdigit()]
    kind = " ".join(w for w in words if not w.isdigit())
    if kind not in SETTINGS or len(numbers) > 1 or (kind != "unloaded") != bool(numbers):
        raise ValueError(name)
    return kind, int(numbers[0]) if numbers else 0


def _prepare(
    backend: str, stack: ExitStack, work: Path, args: argparse.Namespace
) -> tuple[str, list[tuple[str, str]]]:
    if backend == "postgresql":
        url = stack.enter_context(TemporaryPostgres()).create_database("expvid_flood")
    else:
        url = f"sqlite:///{work / 'platform.db'}"
    upgrade_to_head(url)
    database = Database(url)
    try:
        clip = work / "clip.mp4"
        write_video(clip, (scene_frame(i, 96, 64) for i in range(20)), fps=10, preset="ultrafast")
        passwords = Passwords(PasswordPolicy())  # production cost: every wrong password costs what it would
        reviewers = [(f"reviewer{i:02d}", f"password-{i:02d}-long") for i in range(args.reviewers)]
        with database.write() as db:
            for name, password in reviewers:
                add_user(db, passwords, username=name, password=password, role="annotator", actor=SYSTEM)
            add_user(db, passwords, username=OWNER[0], password=OWNER[1], role="admin", actor=SYSTEM)
            add_user(
                db, passwords, username=NEWCOMER[0], password=NEWCOMER[1], role="adjudicator", actor=SYSTEM
            )
        import_candidates(database, write_synthetic_candidates(work / "candidates", args.items, clip))
    finally:
        database.dispose()
    # The owner has signed in from her own computer before (any working day).
    port = free_port()
    server = _serve(url, port, work / "server.log", 1, 19, 0.5)
    try:
        status, _ = sign_in_once(f"http://127.0.0.1:{port}", *OWNER, OWNER_ADDRESS)
        if status != 303:
            raise RuntimeError(f"the owner could not sign in before the benchmark ({status})")
    finally:
        _stop(server)
    return url, reviewers


def run_backend(backend: str, phases: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="expvid-flood-")))
        url, reviewers = _prepare(backend, stack, work, args)
        print(
            f"{backend}: {args.items} items, {args.reviewers} reviewers, {args.seconds:g} s per phase",
            flush=True,
        )
        rows = []
        for name in phases:
            row = run_phase(name, url, work, reviewers, args)
            row["backend"] = backend
            rows.append(row)
            print(json.dumps(row), flush=True)
    unloaded = [r["saves_per_s"] for r in rows if r["phase"] == "unloaded"]
    base = sum(unloaded) / len(unloaded) if unloaded else 0.0
    for row in rows:
        row["ratio_to_unloaded"] = round(row["saves_per_s"] / base, 2) if base else None
    return rows


def _print_table(rows: list[dict[str, Any]]) -> None:
    print(f"\n{'backend':<10} {'phase':<10} {'saves/s':>7} {'ratio':>5} {'p50 ms':>6} {'p95 ms':>6} "
          f"{'owner p50/max s':>15} {'new p50/max s':>13} {'att/s':>5} {'MB':>5} {'cpu s':>5} {'flood':>5} "
          f"{'load':>4}  statuses")  # fmt: skip
    for row in rows:
        owner, new = row["owner_sign_in"], row["newcomer_sign_in"]

        def fmt(t: dict[str, Any]) -> str:
            if not t["tries"]:
                return "-"
            failed = f" ({t['failed']}/{t['tries']} failed)" if t["failed"] else ""
            return f"{t['p50_s']}/{t['max_s']}{failed}"

        print(
            f"{row['backend']:<10} {row['phase']:<10} {row['saves_per_s']:>7} {row['ratio_to_unloaded'] or '-':>5} "
            f"{row['save_ms']['p50']:>6} {row['save_ms']['p95']:>6} {fmt(owner):>15} {fmt(new):>13} "
            f"{row['sign_ins_per_s']:>5} {row['server_peak_mb'] or '-':>5} {row['server_cpu_s'] or '-':>5} "
            f"{row['flooders_cpu_s'] or '-':>5} {row['load_average']:>4}  {row['sign_in_statuses']}"
        )


#: The issue's aims: the owner signs in within this many seconds, and saves keep this share of
#: their unloaded rate, in every flood phase on both backends.
OWNER_AIM_S = 2.0
SAVES_AIM = 0.8


def _print_aims(rows: list[dict[str, Any]]) -> None:
    """One line per backend: in how many flood phases of the default setting each aim was met."""
    for backend in dict.fromkeys(row["backend"] for row in rows):
        floods = [r for r in rows if r["backend"] == backend and _parse_phase(r["phase"])[0] == "flood"]
        if not floods:
            continue
        owner = [r for r in floods if r["owner_sign_in"]["tries"]]
        owner_ok = sum(
            1
            for r in owner
            if not r["owner_sign_in"]["failed"] and r["owner_sign_in"]["max_s"] <= OWNER_AIM_S
        )
        saves_ok = sum(1 for r in floods if (r["ratio_to_unloaded"] or 0.0) >= SAVES_AIM)
        print(
            f"{backend}: owner within {OWNER_AIM_S:g} s in {owner_ok} of {len(owner)} flood phases; "
            f"saves at {SAVES_AIM:.0%} or more of unloaded in {saves_ok} of {len(floods)}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--attackers", default="8,80", help="flooder counts, comma-separated")
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument(
        "--phases", default="unloaded,flood",
        help=f"comma-separated kinds, each flood kind run once per --attackers count: {', '.join(SETTINGS)}",
    )  # fmt: skip
    parser.add_argument(
        "--rounds", type=int, default=1,
        help="run the phase list this many times, interleaved (the ratio uses every unloaded phase): "
        "on a shared machine the load of other work drifts between phases",
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not set(backends) <= {"sqlite", "postgresql"}:
        parser.error("--backends: sqlite and/or postgresql")
    counts = [int(n) for n in args.attackers.split(",") if n.strip()]
    phases: list[str] = []
    for kind in (p.strip() for p in args.phases.split(",") if p.strip()):
        if kind not in SETTINGS:
            parser.error(f"unknown phase {kind!r}")
        phases += [kind] if kind == "unloaded" else [f"flood {n}{kind.removeprefix('flood')}" for n in counts]
    phases = phases * max(1, args.rounds)
    rows = [row for backend in backends for row in run_backend(backend, phases, args)]
    _print_table(rows)
    _print_aims(rows)
    if args.json:
        args.json.write_text(json.dumps({"phases": rows}, indent=2) + "\n")
    return 0 if all(not r["errors"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
