"""Where a verified release keeps what must not be published: a sibling folder with a loud name.

The exporter writes the public release to `DIR/` and its provenance (original clip names, local
paths, drafts, judgements) to `DIR-INTERNAL-do-not-publish/`; readers of an export (the hub's
summary, the review platform) find that folder by the same rule, so the name lives below both.
"""

from __future__ import annotations

from pathlib import Path

#: The ending of the internal folder's name, beside the public release.
INTERNAL_SUFFIX = "-INTERNAL-do-not-publish"


def default_internal_dir(out: Path) -> Path:
    """The internal sibling of the public release folder `out`."""
    return out.parent / f"{out.name}{INTERNAL_SUFFIX}"
