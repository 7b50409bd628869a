"""Which recordings CaptainCook4D publishes in 4K (ProMQA's filter, `-R require_4k=true`).

ProMQA made examples only from recordings with a 4K GoPro video (the official `create_example.py`
skips the others): its frames are cut from the 4K files. The official code reads this from
CaptainCook4D's downloader, `metadata/download_links.json` (github.com/CaptainCook4D/downloader):
one entry per recording, with a `gopro_4k` link when the 4K video exists (363 of 384). Neither
repository publishes a list of its own; this module reads that file, from `-R download_links=PATH`
or where a checkout of the downloader sits beside the annotations.
"""

from __future__ import annotations

import json
from pathlib import Path

from expvid.schema import DataError

LINKS_FILE = "download_links.json"
#: Where the downloader's file is looked for, under the sources folder and the annotations' parent.
LINKS_CANDIDATES = (f"downloader/metadata/{LINKS_FILE}", f"metadata/{LINKS_FILE}", LINKS_FILE)
KEY_4K = "gopro_4k"


def find_links(*bases: Path) -> Path | None:
    for base in dict.fromkeys(bases):
        for candidate in LINKS_CANDIDATES:
            if (base / candidate).is_file():
                return base / candidate
    return None


def recordings_with_4k(path: Path) -> set[str]:
    """The recording ids whose entry in download_links.json has a 4K video."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise DataError(
            f"{path}: expected CaptainCook4D's download_links.json (recording id -> {{{KEY_4K}: URL, ...}})"
        )
    return {str(recording) for recording, links in data.items() if links.get(KEY_4K)}
