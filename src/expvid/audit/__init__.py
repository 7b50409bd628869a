"""Validity audit of a benchmark release (`expvid audit`): can its items be answered without the video?

Public API (docs/audit.md), imported lazily so that `import expvid.audit.duplicates` (which the
recipes' option checks use) loads nothing else:

- `near_duplicate_pairs(options, embeddings=...)`: the pairs of one item's options that are the
  same answer written twice (normal form, equal value, MiniLM embedding); `default_embedder()`;
- `audit_items(items, runs=..., options=AuditOptions(...))`: the whole audit of a list of
  `expvid.schema.Item`s (and optional run directories) as an `AuditReport` (audit.json);
- `audit_release(data, suite=...)`: the same for a release on disk or `hf:ORG/NAME`, read through
  the suites' registry;
- `read_audit(path)`: an audit.json back as an `AuditReport` (the release gate, the platform).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "near_duplicate_pairs": "expvid.audit.duplicates",
    "DuplicatePair": "expvid.audit.duplicates",
    "EmbeddingTable": "expvid.audit.duplicates",
    "EMBEDDING_THRESHOLD": "expvid.audit.duplicates",
    "default_embedder": "expvid.audit.duplicates",
    "audit_items": "expvid.audit.engine",
    "AuditOptions": "expvid.audit.engine",
    "audit_release": "expvid.audit.release",
    "AuditReport": "expvid.audit.result",
    "SolverResult": "expvid.audit.result",
    "ItemResult": "expvid.audit.result",
    "read_audit": "expvid.audit.result",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'expvid.audit' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return __all__
