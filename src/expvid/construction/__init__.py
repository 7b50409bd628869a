"""expvid.construction: the ExpVid construction pipeline (sections 3.1-3.3, appendix G) as a tool.

`build_candidates(BuildConfig(sources=..., out=..., llm=...))` curates a folder of experiments and
writes LLM-drafted candidate items in the ExpVid release layout, with provenance, Level-2 segments,
paper sections and leakage audits (see docs/build.md). `expvid build` is its command line.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from expvid.construction.accounting import Ledger, Price, parse_price
    from expvid.construction.config import BuildConfig, CurationSettings
    from expvid.construction.pipeline import build_candidates, estimate_candidates

#: Loaded on first use, so that the light modules of the package (the recipe API and registry, read
#: by `expvid build --help` and `expvid recipes list`) do not load the whole pipeline.
_LAZY = {
    "Ledger": "accounting",
    "Price": "accounting",
    "parse_price": "accounting",
    "BuildConfig": "config",
    "CurationSettings": "config",
    "build_candidates": "pipeline",
    "estimate_candidates": "pipeline",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"expvid.construction.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'expvid.construction' has no attribute {name!r}")


__all__ = [
    "BuildConfig",
    "CurationSettings",
    "Ledger",
    "Price",
    "build_candidates",
    "estimate_candidates",
    "parse_price",
]
