"""Where each suite's published release lives, and the `hf:ORG/NAME[@REV]` data spec.

Hub ids are the ones the papers and the official evaluation code point to:
- ExpVid: `OpenGVLab/ExpVid` (annotations/level{1,2,3}/*.jsonl + videos/level_{1,2,3}/, ~42 GB, CC BY-NC 4.0).
- SciVideoBench: `groundmore/scivideobench` (the dataset its official lmms-eval task loads; gated:
  accept the conditions on the Hub and set `HF_TOKEN`).
- SFE: `PrismaX/SFE` (per-language folders; parquet on the Hub is converted to JSONL + image files).
- ProMQA: not on the Hub; its QA files are `data/examples.json` and `data/graphs.json` of the GitHub
  repository `kimihiroh/promqa`. The recordings belong to CaptainCook4D and are downloaded with its
  own tool (`PROMQA_RECORDINGS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HUB_REPOS: dict[str, str] = {
    "expvid": "OpenGVLab/ExpVid",
    "scivideobench": "groundmore/scivideobench",
    "sfe": "PrismaX/SFE",
}
PROMQA_GITHUB = "kimihiroh/promqa"
PROMQA_FILES: tuple[str, ...] = ("data/examples.json", "data/graphs.json")
PROMQA_RECORDINGS = (
    "ProMQA's recordings are CaptainCook4D's and are not redistributed with the QA files. Download them with "
    "https://github.com/CaptainCook4D/downloader (the ProMQA authors use: python download_gopro_data.py "
    "--data2d --resolution4K; see https://captaincook4d.github.io/captain-cook/ for the licence), then put "
    "each recording at {root}/videos/<recording_id>.mp4 (or <recording_id>_4K.mp4, or resolution_4k/). "
    "{n} recording(s) are referenced by the fetched questions."
)

_SPEC = re.compile(r"^hf:(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<rev>[^\s]+))?$")


@dataclass(frozen=True)
class HubSpec:
    repo_id: str
    revision: str

    @property
    def suite(self) -> str | None:
        """The suite whose release this repo is (None for other repos, e.g. an exported benchmark)."""
        for suite, repo in HUB_REPOS.items():
            if repo.lower() == self.repo_id.lower():
                return suite
        return None


def parse_hub_spec(text: str) -> HubSpec | None:
    """`hf:ORG/NAME` or `hf:ORG/NAME@REVISION` -> HubSpec; None when `text` is not an hf: spec."""
    if not text.startswith("hf:"):
        return None
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected hf:ORG/NAME or hf:ORG/NAME@REVISION")
    return HubSpec(match["repo"], match["rev"] or "main")


def suite_of_repo(repo_id: str) -> str | None:
    return HubSpec(repo_id, "main").suite
