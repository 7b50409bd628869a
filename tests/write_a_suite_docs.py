"""docs/write-a-suite.md's file blocks (the TinyQA package), for the tests that build or read it."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
_BLOCK = re.compile(r"^```\w+ file=(\S+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks() -> dict[str, str]:
    """Path in the package -> text, as the page shows them."""
    return dict(_BLOCK.findall((DOCS / "write-a-suite.md").read_text(encoding="utf-8")))
