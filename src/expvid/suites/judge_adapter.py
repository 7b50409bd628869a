"""The part every suite's judge adapter shares: it wraps a scoring judge and speaks for it.

A suite adapter only decides what the inner judge is shown (`judge`); its name, its description
for the manifest and its offline label are the inner judge's own.
"""

from __future__ import annotations

from typing import Any

from expvid.schema import JudgeSettings
from expvid.scoring import Extraction
from expvid.suites.protocol import JUDGE_INPUTS


def check_judge_input(choice: str) -> str:
    if choice not in JUDGE_INPUTS:
        raise ValueError(f"judge_input must be one of {', '.join(JUDGE_INPUTS)}, got {choice!r}")
    return choice


def judged_text(choice: str, extraction: Extraction, response: str | None) -> str:
    """The prediction a judge is shown: the reply exactly as the model wrote it ("raw", what the
    official ProMQA and SFE code send), or the extracted answer, think blocks removed ("stripped")."""
    if choice == "raw" and response is not None:
        return response
    return extraction.value if isinstance(extraction.value, str) else (response or "")


class JudgeAdapter:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.offline_note: str | None = getattr(inner, "offline_note", None)

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = self.inner.describe()
        return described

    def manifest_settings(self) -> JudgeSettings:
        settings: JudgeSettings = self.inner.manifest_settings()
        return settings
