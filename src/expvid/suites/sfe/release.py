"""SFE's Hub release (`PrismaX/SFE`): per-language folders of records, images referenced or embedded.

The languages fetched are the run's (`-S language=...`), or those a previous fetch into the same
folder had. Parquet files are read as published (images embedded in them are written once into the
image cache by the loader), so nothing is converted after the download.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from expvid.schema import DataError, ImagesRef
from expvid.schema.dataset import Dataset
from expvid.suites.release_layout import Selection
from expvid.suites.sfe.loader import load_sfe
from expvid.suites.sfe.spec import LANGUAGES, TASKS


class SFELayout:
    """Per-language folders (`20250515-en/`, `en/`, ...) of JSON(L) or parquet records, plus images."""

    suite = "sfe"

    def __init__(self, languages: Sequence[str] = ("en",)) -> None:
        #: The run's languages (`-S language=`); a previous fetch's are passed to `select` on top.
        self.languages = tuple(languages)

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection:
        if levels:
            raise DataError("--levels applies to ExpVid only (SFE cognitive levels are not separate files)")
        names = [spec.name for spec in TASKS]
        bad = [t for t in tasks or () if t not in names]
        if bad:
            raise DataError(f"unknown SFE task(s) {bad}; tasks are: {', '.join(names)}")
        chosen_languages = tuple(dict.fromkeys([*self.languages, *(languages or ())]))
        wrong = [lang for lang in chosen_languages if lang not in LANGUAGES]
        if wrong:
            raise DataError(f"SFE languages are {', '.join(LANGUAGES)}; got {wrong}")
        return Selection(tuple(t for t in names if not tasks or t in tasks), languages=chosen_languages)

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        chosen = []
        problems = []
        for language in selection.languages or ():
            found = [p for p in listing if _language_file(p, language)]
            if not found:
                problems.append(
                    f"no {language} records (a folder '{language}' or '*-{language}') in the repository"
                )
            chosen += sorted(found)
        return chosen, problems

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        # Nothing to convert: the SFE loader reads the Hub's parquet files as published and writes
        # their embedded images once into the image cache (`expvid.suites.sfe.parquet`).
        return []

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset:
        return load_sfe(
            root, languages=selection.languages or ("en",), tasks=selection.tasks, check_media=check_media
        )

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
        needed: set[str] = set()
        problems = []
        for item in dataset.items:
            if not isinstance(item.media, ImagesRef):
                continue
            raw_paths = item.meta.get("images_raw") or []
            for raw, resolved in zip(raw_paths, item.media.paths, strict=False):
                if Path(resolved).is_file():
                    continue  # already here (parquet images are decoded into the cache)
                # The loader's order: as written, then images/<name>, then next to a records file.
                candidates = [raw, f"images/{posixpath.basename(raw)}"]
                hit = next((c for c in candidates if c in listing), None)
                hit = hit or next((p for p in sorted(listing) if p.endswith("/" + raw)), None)
                if hit is None:
                    problems.append(f"{item.id}: image {raw} is not in the repository")
                else:
                    needed.add(hit)
        return needed, problems

    def place_media(self, root: Path, downloaded: set[str]) -> list[str]:
        return []


def _language_file(path: str, language: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    if not name.endswith((".json", ".jsonl", ".parquet")):
        return False
    if len(parts) == 1:
        stem = name.rsplit(".", 1)[0].lower()
        return stem == language or stem.endswith((f"_{language}", f"-{language}"))
    folder = parts[0].lower()
    return folder == language or folder.endswith((f"-{language}", f"_{language}"))
