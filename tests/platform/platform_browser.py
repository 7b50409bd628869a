"""Shared pieces of the browser tests: Debian's Chromium through Playwright (never a downloaded
browser), signing in through the real login form, and a watch on JavaScript and console errors
(CSP violations land there). Test modules import the fixtures they use from here."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_env import LiveServer, password_of

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _unavailable(reason: str) -> None:
    """Skip, or fail when CI requires the browser tests (EXPVID_REQUIRE_BROWSER=1)."""
    if os.environ.get("EXPVID_REQUIRE_BROWSER") == "1":
        pytest.fail(reason + " and EXPVID_REQUIRE_BROWSER=1")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Module-scoped: Playwright's sync API keeps an event loop running in this thread while it is
    open, and later test modules call asyncio.run()."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable(
            "the playwright package is not installed (pip install playwright; never `playwright install`)"
        )
    if not CHROMIUM.exists():
        _unavailable(
            f"{CHROMIUM} is missing (apt-get install chromium); browser tests need Debian's Chromium"
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


#: JavaScript errors and console errors (CSP violations land there) seen by any page of a test.
PAGE_ERRORS: list[str] = []


@pytest.fixture(autouse=True)
def no_page_errors() -> Iterator[None]:
    PAGE_ERRORS.clear()
    yield
    assert PAGE_ERRORS == []


#: Form answers that are part of the design (a refused save re-renders the form with 409 or 422).
EXPECTED_STATUSES = ("status of 409", "status of 422")


def _on_console(message: object) -> None:
    text = str(message.text)  # type: ignore[attr-defined]
    if message.type == "error" and not any(s in text for s in EXPECTED_STATUSES):  # type: ignore[attr-defined]
        PAGE_ERRORS.append(f"console: {text}")


def _watch(page: object) -> None:
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"page error: {error}"))  # type: ignore[attr-defined]
    page.on("console", _on_console)  # type: ignore[attr-defined]


def sign_in(browser: object, server: LiveServer, username: str) -> object:
    context = browser.new_context(base_url=server.url)  # type: ignore[attr-defined]
    context.set_default_timeout(10_000)
    context.on("page", _watch)
    page = context.new_page()
    page.goto("/login")
    page.fill("#username", username)
    page.fill("#password", password_of(username))
    page.click("button[type=submit]")
    page.wait_for_selector(f"[data-testid=who]:has-text('{username}')")
    return page
