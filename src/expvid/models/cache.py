"""On-disk response cache: the same full request never costs a second model call.

The key is a hash of EVERYTHING that can change the answer (backend kind, model, messages with image
content hashes, sampling settings, thinking, extra body, wire options), so a changed prompt, a different
frame or a new temperature is a miss, never a stale hit. `hints` and `metadata` are not sent to the
model and are left out, with one exception: `metadata["cache_round"]` (see below).

The server URL is NOT part of the key: the same model answers the same request the same way whether it
is reached on another host, another port, or through several endpoints at once, and a campaign that
resumes a killed run against a restarted server (new port) or adds a second endpoint must not pay again
for what was already answered. Backend kind and model stay in the key, so another model or another API
family is always a miss.

Unless the caller asks for the server to count too (`scope="server"`, backend option
`cache_scope="server"`): judges do, because a judge's reply is part of a measurement, and a judge
server that answered badly (a wrong model behind the same name, a broken template) must not have
its replies served again once it is fixed or replaced by another server. The URL is then in the
key, normalised (no trailing slash; several endpoints as their sorted set).

`metadata["cache_round"]` (a positive integer) asks for a FRESH answer to a request that was already
answered: it joins the key without being sent, so the request reaches the model again and its reply
is stored beside the old one. `expvid build` uses it to retry a unit whose cached reply was unusable
(a refusal, invalid JSON after every re-ask) and for `--redo`; round 0 (absent) is the plain key.

Storage is one sqlite file in WAL mode: readers never block the writer, several processes (parallel
runs sharing a cache) are safe, and a crash loses at most the response being written. sqlite calls
run in a worker thread so a busy database never stalls the event loop. Only successful responses are
stored; failures are always retried on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from expvid.models.stats import BackendStats
from expvid.models.types import GenerateRequest, GenerateResponse, ImagePart, TextPart

CACHE_FILE_NAME = "responses.sqlite3"
#: Bump when the meaning of a key changes so old entries can never be served for new requests.
#: Version 2 dropped the server URL from the key (version-1 entries are simply never hit again).
KEY_VERSION = 2
#: The metadata entry that joins the key (a retry round; see the module docstring).
CACHE_ROUND = "cache_round"


def request_fingerprint(request: GenerateRequest) -> dict[str, Any]:
    """The parts of a request that reach the model, with images replaced by their content hash."""
    messages = []
    for message in request.messages:
        parts: list[dict[str, str]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                parts.append({"type": "image", "mime": part.mime, "sha256": part.digest})
        messages.append({"role": message.role, "content": parts})
    fingerprint: dict[str, Any] = {
        "messages": messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "thinking": None if request.thinking is None else request.thinking.model_dump(mode="json"),
    }
    if request.response_schema is not None:  # only when asked: every other request keeps its key
        fingerprint["response_schema"] = request.response_schema.model_dump(mode="json")
    return fingerprint


def cache_key(
    request: GenerateRequest,
    *,
    backend: str,
    model: str,
    base_url: str | None = None,
    extra: dict[str, Any] | None = None,
    scope: str = "model",
) -> str:
    """sha256 of the canonical JSON of the full request; `extra` holds body additions and wire options.

    `base_url` joins the key only with `scope="server"`: see the module docstring.
    """
    payload: dict[str, Any] = {
        "v": KEY_VERSION,
        "backend": backend,
        "model": model,
        "request": request_fingerprint(request),
        "extra": extra or {},
    }
    if scope == "server":
        payload["server"] = ",".join(sorted(url.strip().rstrip("/") for url in (base_url or "").split(",")))
    round_ = cache_round(request)
    if round_:
        payload["round"] = round_
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cache_round(request: GenerateRequest) -> int:
    """The request's retry round (0 when absent); a malformed value is a programming error."""
    value = request.metadata.get(CACHE_ROUND, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"metadata[{CACHE_ROUND!r}] must be a non-negative integer, got {value!r}")
    return value


class ResponseCache:
    """A key -> GenerateResponse store in `directory/responses.sqlite3`."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / CACHE_FILE_NAME
        self._local = threading.local()
        #: Every thread's connection with the lock held while it is in use: `close` (on the event
        #: loop's thread) takes each lock before closing, so a lookup still running in a worker
        #: thread after a run stopped finishes first (closing a connection in use crashes SQLite).
        #: A later use opens a new connection, as before the close.
        self._connections: list[tuple[sqlite3.Connection, threading.Lock]] = []
        self._lock = threading.Lock()
        self._connection()  # create the schema now, so a bad path fails at construction

    def _connection(self) -> sqlite3.Connection:
        """One connection per thread (sqlite connections must not be shared across threads)."""
        return self._entry()[0]

    def _entry(self) -> tuple[sqlite3.Connection, threading.Lock]:
        entry: tuple[sqlite3.Connection, threading.Lock] | None = getattr(self._local, "entry", None)
        if entry is None:
            connection = sqlite3.connect(
                self.path, timeout=60.0, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA busy_timeout = 60000")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY,"
                " response TEXT NOT NULL,"
                " created_at REAL NOT NULL)"
            )
            entry = (connection, threading.Lock())
            self._local.entry = entry
            with self._lock:
                self._connections.append(entry)
        return entry

    def get(self, key: str) -> GenerateResponse | None:
        connection, in_use = self._entry()
        with in_use:
            row = connection.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        response = GenerateResponse.model_validate_json(row[0])
        return response.model_copy(update={"cached": True, "request_hash": key})

    def put(self, key: str, response: GenerateResponse) -> None:
        stored = response.model_copy(update={"cached": False, "request_hash": key})
        connection, in_use = self._entry()
        with in_use:
            connection.execute(
                "INSERT OR REPLACE INTO responses (key, response, created_at) VALUES (?, ?, ?)",
                (key, stored.model_dump_json(), time.time()),
            )

    def __len__(self) -> int:
        connection, in_use = self._entry()
        with in_use:
            row = connection.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    async def aget(self, key: str) -> GenerateResponse | None:
        return await asyncio.to_thread(self.get, key)

    async def aput(self, key: str, response: GenerateResponse) -> None:
        await asyncio.to_thread(self.put, key, response)

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection, in_use in connections:
            with in_use:  # a lookup still running in another thread finishes first
                connection.close()
        self._local = threading.local()


async def cached_response(
    cache: ResponseCache | None, key: str, stats: BackendStats
) -> GenerateResponse | None:
    """The stored answer to the request `key` names (counted in `stats` as a cache hit), or None."""
    if cache is None:
        return None
    hit = await cache.aget(key)
    if hit is not None:
        stats.cache_hits += 1
    return hit
