"""Load test: many reviewers saving decisions at once, then a check that none was lost or doubled.

Each reviewer is a thread with its own HTTP client and session (signed in through the login form).
It loops over its assigned items: load the review page (page latency), then save a decision through
the JSON API (save latency), naming the versions it saw, exactly as a browser tab would. Some saves
revise an earlier decision; every `race_every`-th save is sent twice at the same moment from two
"tabs" with the same versions, of which exactly one may succeed.

Every save carries a unique nonce in its justification, so afterwards `verify` can check against the
database that each acknowledged save is in the audit trail exactly once, that each reviewer's final
decision is their last acknowledged one, and that no two saves from the same base version were both
acknowledged (a lost update).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import random
import re
import socket
import statistics
import threading
import time
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from expvid.platform.db.engine import Database
from expvid.platform.db.models import AuditEvent, Decision, User

_HIDDEN = re.compile(r'name="(item_version|decision_version|csrf_token)" value="([^"]*)"')
_LEVEL1 = ("materials", "tools", "quantity", "operation")


def write_synthetic_candidates(
    root: Path, n_items: int, clip: Path, *, discipline: str = "Biology", first_id: int = 100_000
) -> Path:
    """A candidate directory of `n_items` Level-1 questions sharing one small clip (for load tests).

    Ids start at `first_id` so that the synthetic items never collide with real ones in the database.
    """
    (root / "videos").mkdir(parents=True, exist_ok=True)
    target = root / "videos" / "clip_shared.mp4"
    if not target.exists():
        target.write_bytes(clip.read_bytes())
    files = {task: (root / "annotations" / "level1" / f"{task}.jsonl") for task in _LEVEL1}
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    handles = {task: path.open("w", encoding="utf-8") for task, path in files.items()}
    try:
        for index in range(n_items):
            task = _LEVEL1[index % 4]
            record = {
                "id": first_id + index // 4,
                "video_path": "videos/clip_shared.mp4",
                "question": f"Which item is handled in step {index}?",
                "options": {
                    "A": f"flask {index}",
                    "B": f"beaker {index}",
                    "C": f"pipette {index}",
                    "D": f"tube {index}",
                },
                "answer": "ABCD"[index % 4],
                "asr_caption": f"narration {index}",
                "video_id": f"V{index // 40}",
                "category": discipline,
            }
            handles[task].write(json.dumps(record) + "\n")
    finally:
        for handle in handles.values():
            handle.close()
    return root


@dataclass(frozen=True)
class Save:
    reviewer: str
    item_id: int
    nonce: str
    status: int
    #: The decision version the save was based on (0 = first decision).
    base_version: int
    #: The decision version the server returned (on success).
    new_version: int | None
    latency: float
    race: bool = False


@dataclass
class LoadResult:
    duration: float
    page_latencies: list[float] = field(default_factory=list)
    save_latencies: list[float] = field(default_factory=list)
    saves: list[Save] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def acknowledged(self) -> list[Save]:
        return [s for s in self.saves if s.status == 200]

    def summary(self) -> dict[str, Any]:
        statuses = Counter(s.status for s in self.saves)
        return {
            "seconds": round(self.duration, 1),
            "pages": len(self.page_latencies),
            "saves_sent": len(self.saves),
            "saves_acknowledged": statuses.get(200, 0),
            "saves_refused_conflict": statuses.get(409, 0),
            "other_statuses": {str(k): v for k, v in statuses.items() if k not in (200, 409)},
            "page_ms": percentiles(self.page_latencies),
            "save_ms": percentiles(self.save_latencies),
            "errors": self.errors[:10],
        }


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "max": None}
    ordered = sorted(values)
    if len(ordered) >= 2:
        cuts = statistics.quantiles(ordered, n=100, method="inclusive")
        p50, p95 = cuts[49], cuts[94]
    else:
        p50 = p95 = ordered[0]
    return {"p50": round(p50 * 1000, 1), "p95": round(p95 * 1000, 1), "max": round(ordered[-1] * 1000, 1)}


def _client(base_url: str) -> httpx.Client:
    transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    return httpx.Client(base_url=base_url, transport=transport, follow_redirects=False, timeout=60)


def sign_in(base_url: str, username: str, password: str) -> tuple[httpx.Client, str]:
    client = _client(base_url)
    page = client.get("/login")
    token = dict(_HIDDEN.findall(page.text))["csrf_token"]
    response = client.post("/login", data={"username": username, "password": password, "csrf_token": token})
    if response.status_code != 303:
        raise RuntimeError(f"{username} could not sign in: HTTP {response.status_code}")
    return client, client.get("/api/me").json()["csrf_token"]


def _body(verdict: str, hidden: dict[str, str], base: int) -> dict[str, Any]:
    """A decision as the API takes it; the justification's nonce identifies this very save."""
    return {
        "verdict": verdict,
        "justification": f"load {uuid.uuid4().hex}",
        "item_version": int(hidden["item_version"]),
        "decision_version": base,
    }


class _Reviewer:
    def __init__(self, base_url: str, username: str, password: str, result: LoadResult, lock: threading.Lock,
                 race_every: int, seed: int) -> None:  # fmt: skip
        self.base_url, self.username, self.password = base_url, username, password
        self.result, self.lock = result, lock
        self.deadline = 0.0
        #: Stop after this many decisions (None: only the deadline stops the reviewer).
        self.saves_each: int | None = None
        self.race_every = race_every
        self.rng = random.Random(f"{seed}:{username}")
        self.client: httpx.Client | None = None
        self.twin: httpx.Client | None = None
        self.csrf = self.twin_csrf = ""

    def sign_in(self) -> None:
        """Sign in (before the clock starts); the second tab shares the session, as browser tabs do."""
        self.client, self.csrf = sign_in(self.base_url, self.username, self.password)
        self.twin = _client(self.base_url)
        self.twin.cookies.update(self.client.cookies)
        self.twin_csrf = self.csrf

    def _record(
        self, *, page: float | None = None, save: Save | None = None, error: str | None = None
    ) -> None:
        with self.lock:
            if page is not None:
                self.result.page_latencies.append(page)
            if save is not None:
                self.result.saves.append(save)
                self.result.save_latencies.append(save.latency)
            if error is not None:
                self.result.errors.append(error)

    def _post(
        self, client: httpx.Client, csrf: str, item_id: int, body: dict[str, Any], base: int, race: bool
    ) -> None:
        nonce = body["justification"]
        started = time.perf_counter()
        response = client.post(f"/api/items/{item_id}/decision", json=body, headers={"X-CSRF-Token": csrf})
        latency = time.perf_counter() - started
        new_version = response.json().get("decision_version") if response.status_code == 200 else None
        self._record(
            save=Save(self.username, item_id, nonce, response.status_code, base, new_version, latency, race)
        )
        if response.status_code not in (200, 409):
            self._record(
                error=f"{self.username} item {item_id}: HTTP {response.status_code} {response.text[:200]}"
            )

    def run(self) -> None:
        client, twin, csrf, twin_csrf = self.client, self.twin, self.csrf, self.twin_csrf
        assert client is not None and twin is not None, "sign_in() first"
        try:
            queue = [
                row["id"] for row in client.get("/api/items").json()["items"] if row["status"] == "to review"
            ]
            self.rng.shuffle(queue)
            revisit: list[int] = []
            count = 0
            for item_id in itertools.chain(queue, itertools.cycle([0])):
                if time.monotonic() >= self.deadline:
                    break
                if self.saves_each is not None and count >= self.saves_each:
                    break
                if item_id == 0:  # queue exhausted: revise earlier decisions
                    if not revisit:
                        break
                    item_id = self.rng.choice(revisit)
                started = time.perf_counter()
                page = client.get(f"/items/{item_id}")
                self._record(page=time.perf_counter() - started)
                if page.status_code != 200:
                    self._record(error=f"{self.username} page {item_id}: HTTP {page.status_code}")
                    continue
                hidden = dict(_HIDDEN.findall(page.text))
                if "item_version" not in hidden:
                    continue  # closed for review (settled by agreement or in conflict)
                base = int(hidden["decision_version"])
                verdict = self.rng.choices(["approve", "reject"], weights=[85, 15])[0]
                count += 1

                if self.race_every and count % self.race_every == 0:
                    first, second = _body(verdict, hidden, base), _body(verdict, hidden, base)
                    threads = [
                        threading.Thread(target=self._post, args=(client, csrf, item_id, first, base, True)),
                        threading.Thread(
                            target=self._post, args=(twin, twin_csrf, item_id, second, base, True)
                        ),
                    ]
                    for thread in threads:
                        thread.start()
                    for thread in threads:
                        thread.join()
                else:
                    self._post(client, csrf, item_id, _body(verdict, hidden, base), base, False)
                revisit.append(item_id)
        finally:
            client.close()
            twin.close()


def run_load(
    base_url: str,
    reviewers: list[tuple[str, str]],
    *,
    duration_s: float,
    race_every: int = 25,
    seed: int = 0,
    start_at: float | None = None,
    saves_each: int | None = None,
) -> LoadResult:
    """Run `len(reviewers)` concurrent reviewers against `base_url` for `duration_s` seconds.

    Sign-ins happen first; the clock starts after them, or at wall-clock time `start_at` (so that
    several client processes started by `run_load_processes` hit the server together). With
    `saves_each`, every reviewer stops after that many decisions (the duration is then only a cap):
    a fixed amount of work, so a test's expectations hold on a slow or busy machine too.
    """
    result = LoadResult(duration=0.0)
    lock = threading.Lock()
    workers = [_Reviewer(base_url, u, p, result, lock, race_every, seed) for u, p in reviewers]
    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        list(pool.map(lambda w: w.sign_in(), workers))
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    started = time.monotonic()
    for worker in workers:
        worker.deadline = started + duration_s
        worker.saves_each = saves_each
    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        for future in [pool.submit(w.run) for w in workers]:
            try:
                future.result()
            except Exception as error:  # a reviewer that crashed is reported, not hidden
                result.errors.append(f"reviewer failed: {error!r}")
    result.duration = time.monotonic() - started
    return result


def _run_chunk(args: tuple[str, list[tuple[str, str]], float, int, int, float]) -> LoadResult:
    base_url, reviewers, duration_s, race_every, seed, start_at = args
    return run_load(
        base_url, reviewers, duration_s=duration_s, race_every=race_every, seed=seed, start_at=start_at
    )


def run_load_processes(
    base_url: str,
    reviewers: list[tuple[str, str]],
    *,
    duration_s: float,
    processes: int,
    race_every: int = 25,
    seed: int = 0,
    sign_in_allowance_s: float = 30.0,
) -> LoadResult:
    """`run_load` spread over several client processes, so that the clients' own interpreter lock does
    not add to the latencies measured; all processes start saving at the same moment."""
    chunks = [reviewers[i::processes] for i in range(processes) if reviewers[i::processes]]
    start_at = time.time() + sign_in_allowance_s
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=len(chunks), mp_context=context) as pool:
        parts = list(
            pool.map(
                _run_chunk, [(base_url, chunk, duration_s, race_every, seed, start_at) for chunk in chunks]
            )
        )
    merged = LoadResult(duration=max(part.duration for part in parts))
    for part in parts:
        merged.page_latencies += part.page_latencies
        merged.save_latencies += part.save_latencies
        merged.saves += part.saves
        merged.errors += part.errors
    return merged


@dataclass
class Verification:
    acknowledged: int
    decisions_in_database: int
    lost: list[str]
    duplicated: list[str]

    @property
    def ok(self) -> bool:
        return not self.lost and not self.duplicated


def verify(database: Database, result: LoadResult) -> Verification:
    """Compare what the clients were told with what the database holds."""
    acknowledged = result.acknowledged
    with database.read() as db:
        users = {u.username: u.id for u in db.scalars(select(User))}
        decisions = {
            (d.item_id, d.user_id): d
            for d in db.scalars(select(Decision).where(Decision.justification.like("load %")))
        }
        events = Counter(
            reason
            for (reason,) in db.execute(
                select(AuditEvent.reason).where(
                    AuditEvent.action.in_(("decision.created", "decision.updated")),
                    AuditEvent.reason.like("load %"),
                )
            )
        )
    lost, duplicated = [], []
    for save in acknowledged:
        seen = events.get(save.nonce, 0)
        if seen == 0:
            lost.append(
                f"{save.reviewer} item {save.item_id}: acknowledged save {save.nonce} is not in the audit trail"
            )
        elif seen > 1:
            duplicated.append(f"{save.reviewer} item {save.item_id}: save {save.nonce} recorded {seen} times")
    latest: dict[tuple[int, int], Save] = {}
    per_base: dict[tuple[int, int, int], int] = defaultdict(int)
    for save in acknowledged:
        key = (save.item_id, users[save.reviewer])
        per_base[(*key, save.base_version)] += 1
        if key not in latest or (save.new_version or 0) > (latest[key].new_version or 0):
            latest[key] = save
    for (item_id, user_id, base), n in per_base.items():
        if n > 1:
            duplicated.append(
                f"item {item_id} user {user_id}: {n} saves acknowledged from decision version {base}"
            )
    for key, save in latest.items():
        decision = decisions.get(key)
        if decision is None:
            lost.append(f"{save.reviewer} item {save.item_id}: no decision in the database")
        elif decision.justification != save.nonce or decision.version != save.new_version:
            lost.append(
                f"{save.reviewer} item {save.item_id}: database holds {decision.justification!r} v{decision.version}, "
                f"last acknowledged {save.nonce!r} v{save.new_version}"
            )
    unexplained = {reason for reason in events if reason is not None} - {s.nonce for s in acknowledged}
    for nonce in sorted(unexplained):
        duplicated.append(f"save {nonce} is in the audit trail but was not acknowledged")
    return Verification(
        acknowledged=len(acknowledged), decisions_in_database=len(decisions), lost=lost, duplicated=duplicated
    )
