"""Building and checking `manifest.json`: what a run's numbers depend on, written before any work."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from expvid.hub.record import data_source
from expvid.run.config import EvalConfig
from expvid.schema import DataError, JudgeSettings, RunManifest, SamplerSettings

#: Libraries whose versions can change frames, requests or scores.
_TRACKED = (
    "expvid",
    "av",
    "numpy",
    "pillow",
    "pydantic",
    "openai",
    "httpx",
    "sentence-transformers",
    "torch",
)


def library_versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _TRACKED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def new_manifest(
    config: EvalConfig,
    *,
    command: list[str],
    fingerprint: str,
    samplers: dict[str, SamplerSettings],
    judge: JudgeSettings | None,
    backend: dict[str, Any],
    generation: dict[str, Any],
) -> RunManifest:
    return RunManifest(
        suite=config.suite,
        model=config.model,
        command=command,
        config={
            "identity": config.identity(),
            "settings": config.model_dump(mode="json", exclude={"backend_options"}),
            "backend": backend,
            "generation": generation,
            # Where the data came from (fetch.json of `expvid data fetch` / `--data hf:`), else None.
            "data_source": data_source(Path(config.data)),
        },
        samplers=samplers,
        judge=judge,
        dataset_root=str(config.data),
        dataset_fingerprint=fingerprint,
        versions=library_versions(),
    )


def check_resumable(existing: RunManifest, config: EvalConfig, fingerprint: str) -> None:
    """Refuse to resume a run directory made with different settings or different data."""
    problems = []
    if existing.dataset_fingerprint and existing.dataset_fingerprint != fingerprint:
        problems.append(
            f"dataset fingerprint differs (run: {existing.dataset_fingerprint[:12]}, now: {fingerprint[:12]})"
        )
    before = existing.config.get("identity", {})
    now = config.identity()
    for key in sorted(set(before) | set(now)):
        if before.get(key) != now.get(key):
            problems.append(f"{key}: run has {before.get(key)!r}, now {now.get(key)!r}")
    if problems:
        listing = "\n  ".join(problems)
        raise DataError(
            f"{config.out} holds a run with other settings; use a new --out or the same settings:\n  {listing}"
        )
