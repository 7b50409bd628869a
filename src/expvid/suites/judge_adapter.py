"""The part every suite's judge adapter shares: it wraps a scoring judge and speaks for it.

A suite adapter only decides what the inner judge is shown (`judge`); its name, its description
for the manifest and its offline label are the inner judge's own, plus what the judge reads
(`judge_input`) where the suite lets a user choose it.
"""

from __future__ import annotations

from typing import Any, Literal

from expvid.schema import JudgeSettings
from expvid.scoring import Extraction
from expvid.suites.protocol import JUDGE_INPUTS
from expvid.suites.settings import setting

#: What a judge is shown: the reply as the model wrote it ("raw", what official scorers send), or
#: the extracted answer with its think blocks removed ("stripped").
JudgeInput = Literal["raw", "stripped"]


def judge_input_setting(help: str, paper: str = "the official scoring code sends the raw reply") -> Any:
    """The `judge_input` setting a suite with a judge declares (scoring only, default raw)."""
    return setting("raw", help=help, paper=paper, scoring=True)


def check_judge_input(choice: str) -> str:
    if choice not in JUDGE_INPUTS:
        raise ValueError(f"judge_input must be one of {', '.join(JUDGE_INPUTS)}, got {choice!r}")
    return choice


def judged_text(choice: str, extraction: Extraction, response: str | None) -> str:
    """The prediction a judge is shown: the reply exactly as the model wrote it ("raw", what
    official scorers send), or the extracted answer, think blocks removed ("stripped")."""
    if choice == "raw" and response is not None:
        return response
    return extraction.value if isinstance(extraction.value, str) else (response or "")


class JudgeAdapter:
    """A suite's judge: the inner scoring judge, and what it is shown (`judge_input`, when chosen)."""

    def __init__(self, inner: Any, judge_input: str | None = None) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.offline_note: str | None = getattr(inner, "offline_note", None)
        self.judge_input = None if judge_input is None else check_judge_input(judge_input)

    def prediction(self, extraction: Extraction, response: str | None) -> str:
        """The text the judge reads for this answer (see `judged_text`)."""
        return judged_text(self.judge_input or "raw", extraction, response)

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = self.inner.describe()
        if self.judge_input is not None:
            described = {**described, "judge_input": self.judge_input}
        return described

    def manifest_settings(self) -> JudgeSettings:
        settings: JudgeSettings = self.inner.manifest_settings()
        return settings
