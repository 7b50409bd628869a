"""The `hf:ORG/NAME[@REV]` data spec, and which suite's release a Hub repo is.

Each suite names its own release (`Suite.hub_repo`, e.g. ExpVid's `OpenGVLab/ExpVid`, the Hub id its
paper and official evaluation code point to); a repo that is none of them (an exported benchmark,
a fork) is read with the suite given by `--suite`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"^hf:(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<rev>[^\s]+))?$")


@dataclass(frozen=True)
class HubSpec:
    repo_id: str
    revision: str

    @property
    def suite(self) -> str | None:
        """The suite whose release this repo is (None for other repos, e.g. an exported benchmark)."""
        from expvid.suites.registry import suite_for_hub_repo

        return suite_for_hub_repo(self.repo_id)


def parse_hub_spec(text: str) -> HubSpec | None:
    """`hf:ORG/NAME` or `hf:ORG/NAME@REVISION` -> HubSpec; None when `text` is not an hf: spec."""
    if not text.startswith("hf:"):
        return None
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected hf:ORG/NAME or hf:ORG/NAME@REVISION")
    return HubSpec(match["repo"], match["rev"] or "main")
