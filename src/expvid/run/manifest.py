"""Building and checking `manifest.json`: what a run's numbers depend on, written before any work."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from expvid.hub.record import data_source
from expvid.run.config import EvalConfig
from expvid.run.identity import backend_identity, identity_diff, same_tasks
from expvid.schema import DataError, JudgeSettings, RunManifest, SamplerSettings
from expvid.schema.dataset import annotations_digest, fingerprint_of

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


@dataclass(frozen=True)
class DatasetState:
    """The dataset a run is made on: annotation hash and media inventory (sizes, None = missing)."""

    suite: str
    file_hashes: dict[str, str]
    media: dict[str, int | None]

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.suite, self.file_hashes, self.media)

    @property
    def annotations(self) -> str:
        return annotations_digest(self.suite, self.file_hashes)


def new_manifest(
    config: EvalConfig,
    *,
    command: list[str],
    dataset: DatasetState | str,
    samplers: dict[str, SamplerSettings],
    judge: JudgeSettings | None,
    backend: dict[str, Any],
    generation: dict[str, Any],
    identity: dict[str, Any] | None = None,
    suite_settings: dict[str, Any] | None = None,
) -> RunManifest:
    """`dataset` is the dataset's state, or (external predictions) its annotations fingerprint;
    `suite_settings` the suite's settings resolved (every one, defaults filled in)."""
    media = dataset.media if isinstance(dataset, DatasetState) else {}
    return RunManifest(
        suite=config.suite,
        model=config.model,
        command=command,
        config={
            "identity": identity or {},
            "settings": config.model_dump(mode="json", exclude={"backend_options"}),
            "suite_settings": suite_settings if suite_settings is not None else dict(config.suite_settings),
            "backend": backend,
            "generation": generation,
            # Where the data came from (fetch.json of `expvid data fetch` / `--data hf:`), else None.
            "data_source": data_source(Path(config.data)),
        },
        samplers=samplers,
        judge=judge,
        dataset_root=str(config.data),
        dataset_fingerprint=dataset.fingerprint if isinstance(dataset, DatasetState) else dataset,
        annotations_fingerprint=dataset.annotations if isinstance(dataset, DatasetState) else dataset,
        dataset_media=media,
        versions=library_versions(),
    )


@dataclass
class Resumption:
    """What resuming found: the media inventory to record, and notes for the console."""

    media: dict[str, int | None]
    notes: list[str] = field(default_factory=list)


def check_resumable(
    existing: RunManifest,
    out: Path,
    *,
    before: dict[str, Any] | None,
    now: dict[str, Any],
    dataset: DatasetState,
    answered: set[str] = frozenset(),  # type: ignore[assignment]
    defaults: dict[str, Any] | None = None,
) -> Resumption:
    """Refuse to resume a run directory made with other settings or other data, saying what differs.

    Media may have appeared since the run started (the rest of a download), or been replaced when
    no answer was made from them (a truncated file re-downloaded): allowed, and the items that
    failed on them are retried. A file that `answered` items were made from and that changed size
    is refused; one that vanished keeps its recorded size (the answers made from it stand). A setting
    the run did not record is accepted at its default (`defaults`, see `identity_defaults`).
    """
    problems: list[str] = []
    notes: list[str] = []
    recorded_annotations = existing.annotations_fingerprint or existing.dataset_fingerprint
    if recorded_annotations and recorded_annotations != dataset.annotations:
        problems.append(
            f"the annotation files differ (run: {recorded_annotations[:12]}, now: {dataset.annotations[:12]})"
        )
    media, media_problems, media_notes = _merge_media(existing.dataset_media, dataset.media, answered)
    problems += media_problems
    notes += media_notes
    if before is None:
        notes.append(f"{out}: no settings recorded; the resume identity is not checked")
    else:
        compared = dict(now)
        if "backend" not in before and "backend" in now:
            compared.pop("backend")
            if now.get("temperature") is None and "temperature" in before:
                # Whether the old run sent its temperature is unknowable; this model is sent none.
                compared["temperature"] = before["temperature"]
            if now["backend"] != (defaults or {}).get("backend", backend_identity({})):
                notes.append(
                    f"{out} predates backend options in the resume identity; they are not compared "
                    "(make sure they are the ones the run was started with)"
                )
        before, compared = same_tasks(before, compared)
        problems += identity_diff(before, compared, defaults)
    if problems:
        listing = "\n  ".join(problems)
        raise DataError(
            f"{out} holds a run made with other settings or data; resume with the same ones or use a new "
            f"--out. Differences:\n  {listing}"
        )
    return Resumption(media=media, notes=notes)


def _merge_media(
    before: dict[str, int | None], now: dict[str, int | None], answered: set[str]
) -> tuple[dict[str, int | None], list[str], list[str]]:
    resized = [
        key
        for key, size in now.items()
        if size is not None and before.get(key) is not None and before[key] != size
    ]
    changed = [
        f"media file {key}: answers were made from it at {before[key]} bytes, it now has {now[key]}"
        for key in resized
        if key in answered
    ]
    replaced = [key for key in resized if key not in answered]
    appeared = [
        key for key, size in now.items() if size is not None and key in before and before[key] is None
    ]
    vanished = [key for key, size in now.items() if size is None and before.get(key) is not None]
    merged = {key: (before.get(key) if size is None else size) for key, size in now.items()}
    notes = []
    if replaced:
        notes.append(
            f"{len(replaced)} media file(s) changed size since the run started, none with answers made from "
            f"it (e.g. {replaced[0]}); their items are retried"
        )
    if appeared:
        notes.append(
            f"{len(appeared)} media file(s) missing when the run started are now present (e.g. {appeared[0]})"
        )
    if vanished:
        notes.append(
            f"{len(vanished)} media file(s) present when the run started are now missing (e.g. {vanished[0]}); "
            "answers already made from them are kept"
        )
    return merged, changed[:20] + ([f"... and {len(changed) - 20} more"] if len(changed) > 20 else []), notes
