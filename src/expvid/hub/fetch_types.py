"""What a fetch is asked (`FetchRequest`) and gives back (`FetchOutcome`), shared by the Hub fetch
(`fetch`) and the GitHub one (`github_release`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from expvid.hub.record import FetchRecord

Echo = Callable[[str], None]


class FetchError(RuntimeError):
    """The fetch could not go on; the message says why and what to do (files already here are kept)."""


@dataclass(frozen=True)
class FetchRequest:
    suite: str
    out: Path
    repo_id: str | None = None
    revision: str = "main"
    tasks: Sequence[str] | None = None
    levels: Sequence[int] | None = None
    languages: Sequence[str] | None = None
    #: The suite's settings (`-S KEY=VALUE`), for what a layout selects by them (e.g. a language).
    settings: Mapping[str, Any] | None = None
    #: Hub endpoint; None reads HF_ENDPOINT now (huggingface_hub reads it once, at import).
    endpoint: str | None = None
    token: str | bool | None = None
    probe: bool = True
    max_workers: int = 8
    progress: bool = True


@dataclass
class FetchOutcome:
    record: FetchRecord
    root: Path
    problems: list[str] = field(default_factory=list)
    downloaded_files: int = 0

    @property
    def complete(self) -> bool:
        return self.record.verification.complete


def versions() -> dict[str, str]:
    """The versions of expvid and huggingface_hub, for the fetch record."""
    versions = {}
    for package in ("expvid", "huggingface_hub"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = "unknown"
    return versions
