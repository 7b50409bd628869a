"""Shared pieces of the browser tests: Debian's Chromium through Playwright (never a downloaded
browser), signing in through the real login form, and a watch on JavaScript and console errors
(CSP violations land there). Test modules import the fixtures they use from here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from platform_env import LiveServer, password_of

from chromium import launched_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Module-scoped: Playwright's sync API keeps an event loop running in this thread while it is
    open, and later test modules call asyncio.run()."""
    with launched_chromium() as chromium:
        yield chromium


#: JavaScript errors and console errors (CSP violations land there) seen by any page of a test.
PAGE_ERRORS: list[str] = []


@pytest.fixture(autouse=True)
def no_page_errors() -> Iterator[None]:
    PAGE_ERRORS.clear()
    yield
    assert PAGE_ERRORS == [], PAGE_ERRORS  # a helper module: pytest does not rewrite this assert


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
    return sign_in_in(browser.new_context(base_url=server.url), server, username)  # type: ignore[attr-defined]


def sign_in_in(context: object, server: LiveServer, username: str) -> object:
    """Sign in on a new page of `context` (a browser context the caller set up)."""
    context.set_default_timeout(10_000)  # type: ignore[attr-defined]
    context.on("page", _watch)
    page = context.new_page()
    page.goto("/login")
    page.fill("#username", username)
    page.fill("#password", password_of(username))
    page.click("button[type=submit]")
    page.wait_for_selector(f"[data-testid=who]:has-text('{username}')")
    return page
