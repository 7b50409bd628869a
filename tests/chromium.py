"""Debian's Chromium through Playwright, shared by every browser test (never a downloaded browser).

The flags are those that work on a machine with no network: without the background-networking
ones Chromium keeps trying Google's hosts. Missing tools skip the tests, or fail them when CI
requires the browser tests (EXPVID_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def unavailable(reason: str) -> None:
    """Skip, or fail when CI requires the browser tests (EXPVID_REQUIRE_BROWSER=1)."""
    if os.environ.get("EXPVID_REQUIRE_BROWSER") == "1":
        pytest.fail(reason + " and EXPVID_REQUIRE_BROWSER=1")
    pytest.skip(reason)


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """A headless Chromium browser (Playwright's sync API), closed on exit.

    Use it from a module-scoped fixture: the sync API keeps an event loop running in this thread
    while it is open, and later test modules call asyncio.run()."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable(
            "the playwright package is not installed (pip install playwright; never `playwright install`)"
        )
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing (apt-get install chromium); browser tests need Debian's Chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()
