"""Closing the response cache while a lookup still runs in a worker thread (a run stopped by its
error breaker: the lookup's task is cancelled, its thread is not) must wait for that lookup, not
close the SQLite connection under it: that crashed the whole process (a segmentation fault in
`ResponseCache.get`, seen in CI)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from expvid.models.cache import ResponseCache
from expvid.models.types import GenerateResponse


def test_close_waits_for_lookups_running_in_other_threads(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    for number in range(50):
        cache.put(f"key-{number}", GenerateResponse(text=f"answer {number}"))
    stop = threading.Event()
    found: list[int] = []
    closed_under_it: list[BaseException] = []

    def reader() -> None:
        number = 0
        while not stop.is_set():
            try:
                hit = cache.get(f"key-{number % 50}")
            except sqlite3.ProgrammingError as error:  # its connection closed between two lookups
                closed_under_it.append(error)
                continue
            if hit is not None:
                found.append(number)
            number += 1

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(300):
            cache.close()  # each reader reopens on its next lookup, as after any close
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert found, "the readers never got an answer"
    assert cache.get("key-7") == GenerateResponse(text="answer 7").model_copy(
        update={"cached": True, "request_hash": "key-7"}
    )
    cache.close()
