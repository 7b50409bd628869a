"""HTTP helpers for the platform tests: sign in through the real login form, then call pages and API."""

from __future__ import annotations

import re
from typing import Any

import httpx

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_from(html: str) -> str:
    match = _TOKEN.search(html)
    assert match, "no csrf_token field in the page"
    return match.group(1)


class Browserless:
    """A signed-in HTTP client (cookies kept), with the session's CSRF token at hand."""

    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.client = httpx.Client(base_url=base_url, follow_redirects=False, timeout=30)
        page = self.client.get("/login")
        response = self.client.post(
            "/login",
            data={
                "username": username,
                "password": password,
                "csrf_token": csrf_from(page.text),
                "next": "/",
            },
        )
        assert response.status_code == 303, (response.status_code, response.text[-500:])
        self.csrf = self.client.get("/api/me").json()["csrf_token"]

    def api_post(self, path: str, body: dict[str, Any], *, csrf: bool = True) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf} if csrf else {}
        return self.client.post(path, json=body, headers=headers)

    def form_post(self, path: str, data: dict[str, Any], *, csrf: bool = True) -> httpx.Response:
        payload = dict(data)
        if csrf:
            payload["csrf_token"] = self.csrf
        return self.client.post(path, data=payload)

    def decide(
        self, item_id: int, verdict: str, justification: str = "checked against the clip", **extra: Any
    ) -> httpx.Response:
        detail = self.client.get(f"/api/items/{item_id}").json()
        mine = detail.get("my_decision")
        body = {
            "verdict": verdict,
            "justification": justification,
            "item_version": detail["version"],
            "decision_version": mine["version"] if mine else 0,
            **extra,
        }
        return self.api_post(f"/api/items/{item_id}/decision", body)

    def close(self) -> None:
        self.client.close()
