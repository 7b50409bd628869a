"""`fetch.json`: where a downloaded benchmark came from, at which exact revision, and whether it is complete.

Why a file next to the data: a run is only reproducible if it names the data it scored, and a
branch name ("main") moves. `expvid data fetch` writes the resolved commit sha here; `expvid eval`
copies this record into the run manifest (`config.data_source`), so a result can always be traced
to the exact release files, even when the data directory is reused or moved. Reading it needs no
Hub library (this module imports nothing heavy).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from expvid.schema import DataError

if TYPE_CHECKING:
    from expvid.hub.verify import MediaCheck

FETCH_FILE = "fetch.json"
FORMAT = "expvid-fetch/1"


class SourceInfo(BaseModel):
    """Where the files came from."""

    kind: Literal["hub", "github"]
    #: Hub dataset id ("OpenGVLab/ExpVid") or GitHub repository ("OWNER/NAME").
    repo: str
    #: The endpoint used (HF_ENDPOINT, a mirror, or huggingface.co / github.com).
    endpoint: str
    url: str


#: How many of a fetch's problems `fetch.json` keeps (the command prints them all).
SHOWN_PROBLEMS = 50


class Verification(BaseModel):
    """What the completeness check found after the download."""

    complete: bool
    items: int = 0
    #: Media files referenced by the selected items and found on disk.
    media_present: int = 0
    #: Media files opened and demuxed (or decoded, for images) without error.
    media_readable: int = 0
    #: Whether media were opened (`--no-probe` only checks presence and size).
    probed: bool = True
    n_problems: int = 0
    #: The first problems, as `file:line: message` or `path: problem` (all are printed by the CLI).
    problems: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, items: int, media: MediaCheck, problems: list[str], *, probed: bool) -> Verification:
        """The record of a fetch's check: `problems` are all it found (the release's and the media's),
        of which the first `SHOWN_PROBLEMS` are kept."""
        return cls(
            complete=not problems,
            items=items,
            media_present=media.present,
            media_readable=media.readable,
            probed=probed,
            n_problems=len(problems),
            problems=problems[:SHOWN_PROBLEMS],
        )


class FetchRecord(BaseModel):
    """The content of `fetch.json`."""

    format: str = FORMAT
    suite: str
    source: SourceInfo
    #: What was asked for: a branch, a tag or a commit.
    revision_requested: str
    #: The commit sha it resolved to (what the files are).
    revision: str
    tasks: list[str]
    levels: list[int] | None = None
    languages: list[str] | None = None
    files: int = 0
    bytes: int = 0
    #: sha256 of each annotation file, relative path -> hex digest.
    annotations: dict[str, str] = Field(default_factory=dict)
    #: The suite loader's fingerprint of the selected annotation files (what a run manifest records).
    fingerprint: str | None = None
    license: str | None = None
    fetched_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    versions: dict[str, str] = Field(default_factory=dict)
    verification: Verification
    #: Media the release does not ship (e.g. recordings under another licence): where to get them.
    external_media: str | None = None
    #: How `revision` was known: "hub" (asked the Hub now) or "cache" (offline, `HF_HUB_OFFLINE=1`:
    #: the sha an earlier fetch into this folder resolved, at `resolved_at`; a branch may have moved since).
    resolved_from: Literal["hub", "cache"] = "hub"
    resolved_at: datetime | None = None

    def write(self, root: Path) -> Path:
        path = root / FETCH_FILE
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


def read_fetch_record(root: Path) -> FetchRecord | None:
    """The record in `root/fetch.json`, None when there is none; `DataError` naming the file if unreadable."""
    path = Path(root) / FETCH_FILE
    if not path.is_file():
        return None
    try:
        return FetchRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ValidationError) as error:
        raise DataError(f"{path}: not a valid fetch record ({error})") from None


def data_source(root: Path) -> dict[str, Any] | None:
    """What a run manifest records about its data's origin (None for data not fetched by expvid)."""
    try:
        record = read_fetch_record(root)
    except DataError as error:
        return {"error": str(error)}
    if record is None:
        return None
    return {
        "suite": record.suite,
        "kind": record.source.kind,
        "repo": record.source.repo,
        "url": record.source.url,
        "revision_requested": record.revision_requested,
        "revision": record.revision,
        "tasks": record.tasks,
        "fingerprint": record.fingerprint,
        "complete": record.verification.complete,
        "fetched_at": record.fetched_at.isoformat(),
        "resolved_from": record.resolved_from,
        "resolved_at": None if record.resolved_at is None else record.resolved_at.isoformat(),
    }
