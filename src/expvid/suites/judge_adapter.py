"""The part every suite's judge adapter shares: it wraps a scoring judge and speaks for it.

A suite adapter only decides what the inner judge is shown (`judge`); its name, its description
for the manifest and its offline label are the inner judge's own.
"""

from __future__ import annotations

from typing import Any

from expvid.schema import JudgeSettings


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
