"""What a dataset card says about a verified benchmark: counts, agreement, and how it was built and checked.

Read from the files `expvid platform export` writes (annotations, `agreement.json`,
`verification.json`, `provenance.jsonl`, wherever the exporter put the last one) and reduced to
aggregates that are safe to publish: numbers per task and discipline, agreement statistics per task,
how items were settled, how many were edited, which models drafted them and which audit flags were
raised. Never names, free-text justifications, local paths or database URLs: those stay in the
internal provenance, which is not part of the Hub repository.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.schema.dataset import Dataset
from expvid.schema.release_layout import default_internal_dir


@dataclass
class ExportSummary:
    counts: dict[str, Counter[str]] = field(default_factory=dict)  # task -> discipline -> items
    agreement: dict[str, dict[str, Any]] = field(default_factory=dict)  # "all" and tasks -> statistics
    exported_at: str | None = None
    settled_via: Counter[str] = field(default_factory=Counter)
    edited: int = 0
    judgements: int = 0
    annotators: int = 0
    adjudicated: int = 0
    median_minutes: float | None = None
    draft_models: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    with_provenance: int = 0

    @property
    def disciplines(self) -> list[str]:
        return sorted({d for per_task in self.counts.values() for d in per_task})

    @property
    def total(self) -> int:
        return sum(sum(c.values()) for c in self.counts.values())


def sidecar_dirs(root: Path, internal: Path | None = None) -> list[Path]:
    """Where an export's sidecars may lie: the export itself (a `--no-public` export), the internal
    folder the exporter named, or the default one beside the export."""
    candidates = [root, *([internal] if internal is not None else []), default_internal_dir(root)]
    candidates += [root / "internal", root / ".internal", root.parent / f"{root.name}.internal"]
    return [folder for folder in dict.fromkeys(candidates) if folder.is_dir()]


def find_sidecar(root: Path, name: str, internal: Path | None = None) -> Path | None:
    return next((d / name for d in sidecar_dirs(root, internal) if (d / name).is_file()), None)


def find_provenance(root: Path, internal: Path | None = None) -> Path | None:
    return find_sidecar(root, "provenance.jsonl", internal)


def summarize(root: Path, dataset: Dataset, internal: Path | None = None) -> ExportSummary:
    summary = ExportSummary()
    for task, items in dataset.by_task().items():
        summary.counts[task] = Counter(item.discipline or "unknown" for item in items)
    for spec in dataset.tasks:
        summary.counts.setdefault(spec.name, Counter())
    agreement = find_sidecar(root, "agreement.json", internal)
    summary.agreement = _agreement(agreement) if agreement is not None else {}
    verification = find_sidecar(root, "verification.json", internal)
    manifest = _json(verification) if verification is not None else None
    if isinstance(manifest, dict):
        summary.exported_at = manifest.get("exported_at")
    provenance = find_provenance(root, internal)
    if provenance is not None:
        _provenance(provenance, summary, {item.id for item in dataset})
    return summary


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _agreement(path: Path) -> dict[str, dict[str, Any]]:
    data = _json(path)
    if not isinstance(data, dict):
        return {}
    keep = ("n", "percent_agreement", "cohen_kappa", "gwet_ac1")
    out: dict[str, dict[str, Any]] = {}
    if isinstance(data.get("overall"), dict):
        out["all"] = {k: data["overall"].get(k) for k in keep}
    for task, stats in (data.get("by_task") or {}).items():
        if isinstance(stats, dict):
            out[str(task)] = {k: stats.get(k) for k in keep}
    return out  # by_pair is left out on purpose: it names annotators


def _provenance(path: Path, summary: ExportSummary, item_ids: set[str]) -> None:
    annotators: set[str] = set()
    minutes: list[float] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or (item_ids and record.get("item") not in item_ids):
            continue
        summary.with_provenance += 1
        check = record.get("verification") or {}
        summary.settled_via[str(check.get("settled_via") or "unknown")] += 1
        summary.edited += bool(check.get("edited"))
        for judgement in check.get("judgements") or []:
            summary.judgements += 1
            if judgement.get("annotator"):
                annotators.add(str(judgement["annotator"]))
            if isinstance(judgement.get("minutes"), int | float):
                minutes.append(float(judgement["minutes"]))
        summary.adjudicated += bool(check.get("adjudication"))
        for draft in record.get("drafts") or []:
            if isinstance(draft, dict) and draft.get("model"):
                summary.draft_models[str(draft["model"])] += 1
        for flag in record.get("flags") or []:
            kind = flag.get("kind") if isinstance(flag, dict) else flag
            if kind:
                summary.flags[str(kind)] += 1
    summary.annotators = len(annotators)
    summary.median_minutes = statistics.median(minutes) if minutes else None
