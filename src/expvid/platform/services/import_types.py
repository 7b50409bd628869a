"""What reading a candidate directory yields (`importer.read_directory`), and the refusal of an
import: shared by the importer, the upstream changes it applies (`upstream.py`) and the recipes that
import a directory of their own (`ReviewHooks.import_directory`), so none of them imports another."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.platform.services.import_report import ImportReport
from expvid.schema import DataError


class ImportRefused(DataError):
    """Nothing was imported; `report` holds every problem (for `--json` and `--report`)."""

    def __init__(self, report: ImportReport, message: str | None = None) -> None:
        super().__init__(message if message is not None else report.problems)
        report.refused = message or f"{len(report.problems)} bad line(s); nothing was imported"
        self.report = report


@dataclass
class ParsedItem:
    #: The identity key (`Item.key`): the directory's uid, or the directory-namespaced fallback.
    key: str
    #: "<task>/<id>" as the directory names it.
    release_key: str
    task: str
    record: dict[str, Any]
    provenance: dict[str, Any]
    segment_key: str | None
    #: SHA-256 of what a reviewer sees: the directory's `content_sha256`, else of record + provenance.
    content_sha256: str
    #: SHA-256 of record + provenance (a difference with an unchanged content hash refreshes metadata).
    fingerprint: str
    #: The directory gave the identity (`uid` in provenance.jsonl).
    has_uid: bool = True

    @property
    def video_id(self) -> str:
        return str(self.record["video_id"])


@dataclass
class ParsedSegment:
    key: str
    video_id: str
    record: dict[str, Any]


@dataclass
class ParsedDirectory:
    root: Path
    namespace: str
    items: list[ParsedItem]
    segments: dict[str, ParsedSegment]
    experiments: dict[str, Any]
    #: Experiments this directory speaks for (its records, experiments.jsonl, curation_report.json):
    #: their items on the platform that the directory lacks are removed upstream.
    covered: set[str] = field(default_factory=set)
    papers: dict[str, str] = field(default_factory=dict)


def inside(root: Path, relative: str) -> Path | None:
    """The file `relative` names under `root`, or None if it escapes the root."""
    if not relative or Path(relative).is_absolute():
        return None
    path = (root / relative).resolve()
    return path if path.is_relative_to(root) else None
