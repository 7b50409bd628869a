"""Scripted reviewers for the ProMQA campaign tests: two annotators and an adjudicator on the real web app.

They sign in through the login form, open each item's page (which starts its review clock) and post
the page's own form, judging by the truth of the sample (the example's target steps, the lab's
known non-procedural questions): annotator 1 is careful and writes the right answers when the
machine's are wrong or missing; annotator 2 is hasty on some items (flips the question judgement,
never writes answers), which sends those items to the adjudicator.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

import httpx
from promqa_lab import BAD_QUESTIONS, plain

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
_POOLED = re.compile(
    r'data-testid="pooled-answer" data-open="(yes|no)">\s*<p><strong>Answer \d+:</strong> (.*?)</p>', re.S
)
_VERSION = re.compile(r'name="item_version" value="(\d+)"')
_DECISION_VERSION = re.compile(r'name="decision_version" value="(\d+)"')


class Reviewer:
    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.client = httpx.Client(base_url=base_url, follow_redirects=False, timeout=30)
        page = self.client.get("/login")
        token = _TOKEN.search(page.text)
        assert token
        response = self.client.post(
            "/login",
            data={"username": username, "password": password, "csrf_token": token.group(1), "next": "/"},
        )
        assert response.status_code == 303, response.text[-300:]
        self.csrf = self.client.get("/api/me").json()["csrf_token"]

    def page(self, path: str) -> str:
        response = self.client.get(path)
        assert response.status_code == 200, (path, response.status_code, response.text[-300:])
        return response.text

    def post(self, path: str, data: dict[str, Any]) -> httpx.Response:
        return self.client.post(path, data={**data, "csrf_token": self.csrf})

    def close(self) -> None:
        self.client.close()


def expected_answers(record: dict[str, Any]) -> list[str]:
    """What a right answer says, by question type (the lab writes exactly these when it is right)."""
    kind = record["type"]
    if kind == "next":
        return [plain(s["description"]) for s in record["next_steps"]] or [
            "You have completed all the steps."
        ]
    if kind == "missing":
        return [f"You missed: {plain(s['description'])}" for s in record["missing_steps"]] or [
            "No, you are on track."
        ]
    error = record["error_description"].rstrip(".")
    return [f"No, {error[0].lower() + error[1:]}."]


def correct(record: dict[str, Any], answer: str) -> bool:
    if record["type"] in ("next", "missing"):
        return answer in expected_answers(record)
    return record["error_description"].rstrip(".").lower() in answer.lower()


def hasty(question_id: str) -> bool:
    return int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 4 == 0


def judge_form(record: dict[str, Any], page: str, *, careful: bool) -> dict[str, Any]:
    question, answers = record["question"], record["answers"]
    valid = question not in BAD_QUESTIONS
    if not careful and hasty(record["question_id"]):
        valid = not valid
    form: dict[str, Any] = {
        "question_valid": "yes" if valid else "no",
        "item_version": _VERSION.search(page).group(1),  # type: ignore[union-attr]
        "decision_version": _DECISION_VERSION.search(page).group(1),  # type: ignore[union-attr]
        "note": "" if careful else "quick look",
    }
    if valid:
        for index, answer in enumerate(answers):
            form[f"answer_{index}"] = "yes" if correct(record, answer) else "no"
        if careful:
            missing = (
                [a for a in expected_answers(record) if a not in answers]
                if question not in BAD_QUESTIONS
                else []
            )
            form["written"] = "\n".join(missing)
    return form


def adjudication_form(record: dict[str, Any], page: str) -> dict[str, Any]:
    valid = record["question"] not in BAD_QUESTIONS
    form: dict[str, Any] = {
        "item_version": _VERSION.search(page).group(1),  # type: ignore[union-attr]
        "justification": "checked the recording and the recipe",
    }
    if 'name="question_valid" value="yes" ' in page or 'name="question_valid" value="yes">' in page:
        form["question_valid"] = "yes" if valid else "no"
    pooled = _POOLED.findall(page)
    assert pooled, "no pooled answers on the adjudication page"
    some_correct = False
    for position, (open_, text) in enumerate(pooled):
        text = html.unescape(text).strip()
        right = correct(record, text)
        some_correct |= right
        if open_ == "yes":
            form[f"answer_{position}"] = "yes" if right else "no"
    if valid and 'name="written"' in page and not some_correct:
        form["written"] = "\n".join(expected_answers(record))
    return form
