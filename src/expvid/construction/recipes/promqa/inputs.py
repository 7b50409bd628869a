"""The recipe's inputs as the build and the dry run both see them: the annotations with their
corrections applied, the 4K filter, and each recording's video.

One function, so the dry run plans exactly the recordings and examples the build will make.
"""

from __future__ import annotations

from pathlib import Path

from expvid.construction.recipes.promqa.availability import (
    KEY_4K,
    LINKS_CANDIDATES,
    find_links,
    recordings_with_4k,
)
from expvid.construction.recipes.promqa.captaincook import Corpus, load_captaincook
from expvid.construction.recipes.promqa.config import PromqaBuildConfig
from expvid.construction.recipes.promqa.corrections import read_corrections
from expvid.schema import DataError
from expvid.suites.promqa.spec import VIDEO_CANDIDATES

NO_4K = "no 4K video (download_links.json)"


def find_video(sources: Path, annotations: Path, recording_id: str) -> Path | None:
    """The recording under the sources folder, by the layouts the ProMQA suite reads."""
    for base in dict.fromkeys((sources, annotations, annotations.parent)):
        for pattern in VIDEO_CANDIDATES:
            path = base / pattern.format(id=recording_id)
            if path.is_file():
                return path
    return None


def load_corpus(config: PromqaBuildConfig) -> Corpus:
    """The annotations, corrected (`-R corrections=`), less the recordings without 4K when
    `-R require_4k=true` (those are listed in `corpus.excluded`)."""
    corrections = read_corrections(config.corrections) if config.corrections else None
    corpus = load_captaincook(config.sources, corrections=corrections)
    if not config.require_4k:
        return corpus
    sources = config.sources.expanduser()
    links = config.download_links or find_links(sources, corpus.root, corpus.root.parent)
    if links is None:
        raise DataError(
            f"-R require_4k=true: no CaptainCook4D {LINKS_CANDIDATES[-1]} under {sources} (looked for "
            f"{', '.join(LINKS_CANDIDATES)}); give it with -R download_links=PATH (github.com/CaptainCook4D/"
            f"downloader, metadata/download_links.json: recordings with a `{KEY_4K}` link are kept)"
        )
    available = recordings_with_4k(links.expanduser())
    kept = []
    for recording in corpus.recordings:
        if recording.recording_id in available:
            kept.append(recording)
        else:
            corpus.excluded[recording.recording_id] = NO_4K
    corpus.recordings = kept
    return corpus


def recording_videos(config: PromqaBuildConfig, corpus: Corpus) -> dict[str, Path]:
    """recording id -> its video, for the recordings that have one."""
    sources = config.sources.expanduser()
    videos = {}
    for recording in corpus.recordings:
        found = find_video(sources, corpus.root, recording.recording_id)
        if found is not None:
            videos[recording.recording_id] = found
    return videos
