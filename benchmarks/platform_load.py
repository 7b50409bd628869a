"""Benchmark: 20 concurrent reviewers saving decisions for a minute, with 10,000 items in the database.

Sets up a fresh database (a SQLite file by default, `--backend postgresql` for a throwaway cluster
started with initdb / pg_ctl, or `--db URL`), imports a synthetic candidate directory of 10,000
Level-1 items (each assigned to two of the 20 annotators, as the platform does), then starts the real
server (`expvid platform serve`) in its own process on loopback, so that the clients' work does not
share a Python interpreter with the server.

Each reviewer signs in through the login form, then loops: load the review page of its next item
(page latency), save a decision through the JSON API with the versions it saw (save latency). Some
saves revise earlier decisions, and every 25th save is sent from two tabs at once from the same
version, of which exactly one may succeed. Afterwards every acknowledged save is checked against
the database and the audit trail: none may be missing (lost) or recorded twice (duplicated).

Usage: python benchmarks/platform_load.py [--items 10000] [--reviewers 20] [--seconds 60]
                                          [--backend sqlite|postgresql] [--db URL] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from expvid.media.synth import scene_frame, write_video
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.loadtest import run_load_processes, verify, write_synthetic_candidates
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.errors import SYSTEM
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.users import add_user
from expvid.platform.testing import TemporaryPostgres, free_port


def _serve(db_url: str, port: int, log: Path, workers: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-c", "from expvid.cli.platform import platform_app; platform_app()",
        "serve", "--db", db_url, "--port", str(port), "--workers", str(workers),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--db", help="use this (empty) database URL instead of a fresh one")
    parser.add_argument(
        "--client-processes", type=int, default=4, help="processes the reviewers are spread over"
    )
    parser.add_argument("--workers", type=int, default=1, help="server worker processes (uvicorn)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="expvid-load-")))
        if args.db:
            url = args.db
        elif args.backend == "postgresql":
            url = stack.enter_context(TemporaryPostgres()).create_database("expvid_load")
        else:
            url = f"sqlite:///{work / 'platform.db'}"
        upgrade_to_head(url)
        database = Database(url)
        stack.callback(database.dispose)

        started = time.perf_counter()
        clip = work / "clip.mp4"
        write_video(clip, (scene_frame(i, 96, 64) for i in range(20)), fps=10, preset="ultrafast")
        passwords = Passwords(PasswordPolicy())  # production cost: logins are part of the test
        reviewers = [(f"reviewer{i:02d}", f"password-{i:02d}-long") for i in range(args.reviewers)]
        with database.write() as db:
            for name, password in reviewers:
                add_user(db, passwords, username=name, password=password, role="annotator", actor=SYSTEM)
        report = import_candidates(
            database, write_synthetic_candidates(work / "candidates", args.items, clip)
        )
        assert report.assignment is not None
        setup_s = time.perf_counter() - started
        print(f"database: {database.engine.url.render_as_string()}")
        print(
            f"setup: {report.total_imported} items imported, {report.assignment.assignments_created} "
            f"assignments, {len(reviewers)} reviewers, {setup_s:.1f} s"
        )

        port = free_port()
        server = _serve(url, port, work / "server.log", args.workers)
        try:
            result = run_load_processes(
                f"http://127.0.0.1:{port}",
                reviewers,
                duration_s=args.seconds,
                processes=args.client_processes,
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
        checked = verify(database, result)

    summary = result.summary()
    summary.update(
        backend=args.backend if not args.db else "custom",
        server_workers=args.workers,
        client_processes=args.client_processes,
        items=args.items,
        reviewers=args.reviewers,
        decisions_saved=checked.acknowledged,
        decisions_in_database=checked.decisions_in_database,
        lost=len(checked.lost),
        duplicated=len(checked.duplicated),
    )
    print(f"ran {summary['seconds']} s: {summary['pages']} pages, {summary['saves_sent']} saves sent")
    print(
        f"page latency ms: p50 {summary['page_ms']['p50']}  p95 {summary['page_ms']['p95']}  max {summary['page_ms']['max']}"
    )
    print(
        f"save latency ms: p50 {summary['save_ms']['p50']}  p95 {summary['save_ms']['p95']}  max {summary['save_ms']['max']}"
    )
    print(
        f"decisions saved (acknowledged): {checked.acknowledged}; refused as conflicts: "
        f"{summary['saves_refused_conflict']}; other errors: {summary['other_statuses'] or 'none'}"
    )
    print(f"lost: {len(checked.lost)}  duplicated: {len(checked.duplicated)}")
    for line in (checked.lost + checked.duplicated)[:20]:
        print("  ", line)
    for error in result.errors[:10]:
        print("error:", error)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if checked.ok and not result.errors else 1


if __name__ == "__main__":
    sys.exit(main())
