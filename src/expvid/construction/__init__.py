"""expvid.construction: the ExpVid construction pipeline (sections 3.1-3.3, appendix G) as a tool.

`build_candidates(BuildConfig(sources=..., out=..., llm=...))` curates a folder of experiments and
writes LLM-drafted candidate items in the ExpVid release layout, with provenance, Level-2 segments,
paper sections and leakage audits (see docs/build.md). `expvid build` is its command line.
"""

from expvid.construction.accounting import Ledger, Price, parse_price
from expvid.construction.config import BuildConfig, CurationSettings
from expvid.construction.pipeline import build_candidates, estimate_candidates

__all__ = [
    "BuildConfig",
    "CurationSettings",
    "Ledger",
    "Price",
    "build_candidates",
    "estimate_candidates",
    "parse_price",
]
