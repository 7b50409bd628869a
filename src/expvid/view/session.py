"""The runs being viewed: their files, their datasets, and the items they share.

`ViewSession` is what the web app and the static export both read from. It refreshes the run files
at most every `min_refresh_s` seconds (a run still being written grows under it) and rebuilds the
item list only when a file actually changed.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.run.report.display_names import display_names
from expvid.schema import DataError, Item, SamplerSettings
from expvid.view.dataset import RunDataset, load_run_dataset, locate, sampler_for
from expvid.view.frames import FrameResolver, FrameSet
from expvid.view.runfiles import RunFiles


@dataclass
class RunView:
    """One run directory and what it points to."""

    key: str  # "r0", "r1", ...: how URLs name the run (never a path)
    label: str  # the model's display name (`expvid.run.report.display_names`)
    files: RunFiles
    dataset: RunDataset
    cache_root: Path | None
    cache_recorded: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    _selected: frozenset[str] | None = field(default=None, repr=False)

    @property
    def root(self) -> Path:
        return self.files.root

    @property
    def spec(self) -> str:
        """The model spec the run recorded (the label's tooltip), or its directory's name."""
        return _model(self.files)

    @property
    def selected_ids(self) -> frozenset[str]:
        """Items the run's settings select (empty when the dataset was not found)."""
        if self._selected is None or len(self._selected) != len(self.dataset.selected):
            self._selected = frozenset(self.dataset.selected)
        return self._selected

    @property
    def identity(self) -> dict[str, Any]:
        config = self.files.manifest_raw.get("config")
        identity = config.get("identity") if isinstance(config, dict) else None
        return identity if isinstance(identity, dict) else {}

    def sampler(self, item: Item) -> SamplerSettings | None:
        recorded = self.files.manifest.samplers if self.files.manifest is not None else {}
        frames = self.identity.get("frames") or self.settings.get("frames")
        return sampler_for(item, self.dataset.suite, recorded, frames if isinstance(frames, dict) else None)


def _suite_settings(files: RunFiles, settings: dict[str, Any]) -> dict[str, Any]:
    """The suite settings the run was made with: as recorded resolved, or read from older shapes."""
    config = files.manifest_raw.get("config")
    recorded = config.get("suite_settings") if isinstance(config, dict) else None
    if isinstance(recorded, dict):
        return recorded
    from expvid.run.config import upgrade_settings

    upgraded = upgrade_settings(settings).get("suite_settings")
    return upgraded if isinstance(upgraded, dict) else {}


def _settings(files: RunFiles) -> dict[str, Any]:
    config = files.manifest_raw.get("config")
    settings = config.get("settings") if isinstance(config, dict) else None
    return settings if isinstance(settings, dict) else {}


def _model(files: RunFiles) -> str:
    return str(files.manifest_raw.get("model") or files.root.name)


def _labels(runs: list[RunFiles]) -> list[str]:
    """The model's display name, told apart where two runs would share it (as reports do)."""
    return display_names([_model(files) for files in runs], [files.root.name for files in runs])


class ViewSession:
    """Read-only state of the runs being viewed."""

    def __init__(
        self,
        paths: list[Path],
        *,
        data: Path | None = None,
        cache_dir: Path | None = None,
        min_refresh_s: float = 0.5,
    ) -> None:
        if not paths:
            raise DataError("give at least one run directory")
        files = [RunFiles(path) for path in paths]
        suites = {str(f.manifest_raw.get("suite", "")) for f in files}
        if len(suites) > 1:
            raise DataError(
                f"the runs come from different suites ({', '.join(sorted(suites))}); view them apart"
            )
        self.min_refresh_s = min_refresh_s
        self.frames = FrameResolver()
        self.lock = threading.RLock()
        self._checked = time.monotonic()
        self._version = 0
        self._cache: dict[str, Any] = {}
        loaded: dict[tuple[str, ...], Any] = {}
        self.runs: list[RunView] = []
        for index, (run_files, label) in enumerate(zip(files, _labels(files), strict=True)):
            settings = _settings(run_files)
            manifest = run_files.manifest_raw
            options = _suite_settings(run_files, settings)
            tasks = settings.get("tasks")
            limit = settings.get("limit")
            dataset = load_run_dataset(
                suite_name=str(manifest.get("suite", "")),
                suite_settings=options,
                recorded_root=_text(manifest.get("dataset_root")) or _text(settings.get("data")),
                recorded_fingerprint=_text(manifest.get("dataset_fingerprint")),
                recorded_annotations=_text(manifest.get("annotations_fingerprint")),
                run_root=run_files.root,
                override=data,
                tasks=[str(t) for t in tasks] if isinstance(tasks, list) else None,
                limit=limit if isinstance(limit, int) else None,
                loaded=loaded,
            )
            recorded_cache = _text(settings.get("cache_dir"))
            if cache_dir is not None:
                cache_root: Path | None = cache_dir / "frames"
            elif recorded_cache:
                found = locate(recorded_cache, run_files.root)
                cache_root = (found or Path(recorded_cache)) / "frames"
            else:
                cache_root = None
            self.runs.append(
                RunView(f"r{index}", label, run_files, dataset, cache_root, recorded_cache, settings)
            )

    # -- freshness ------------------------------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> int:
        """Re-read changed run files (at most every `min_refresh_s`); returns the data version."""
        with self.lock:
            now = time.monotonic()
            if force or now - self._checked >= self.min_refresh_s:
                self._checked = now
                changed = False
                for run in self.runs:
                    changed |= run.files.refresh()
                if changed:
                    self._version += 1
                    self._cache.clear()
            return self._version

    @property
    def version(self) -> int:
        return self._version

    def memo(self, name: str, build: Any) -> Any:
        """A value computed once per data version (the item list, the overview)."""
        with self.lock:
            if name not in self._cache:
                self._cache[name] = build()
            return self._cache[name]

    # -- items -------------------------------------------------------------------------------------

    def run(self, key: str) -> RunView:
        for run in self.runs:
            if run.key == key:
                return run
        raise KeyError(key)

    def item_ids(self) -> list[str]:
        """Every item any run selected or answered: dataset order first, then answered extras."""

        def build() -> list[str]:
            seen: dict[str, None] = {}
            for run in self.runs:
                seen.update(dict.fromkeys(run.dataset.selected))
            for run in self.runs:
                for item_id, _ in run.files.predictions:
                    seen.setdefault(item_id, None)
                for item_id, _ in run.files.item_scores:
                    seen.setdefault(item_id, None)
            return list(seen)

        return list(self.memo("item_ids", build))

    def has_item(self, item_id: str) -> bool:
        return item_id in self.memo("item_set", lambda: frozenset(self.item_ids()))

    def item(self, item_id: str) -> Item | None:
        for run in self.runs:
            found = run.dataset.items.get(item_id)
            if found is not None:
                return found
        return None

    def samples(self, item_id: str) -> list[int]:
        found = {s for run in self.runs for (i, s) in run.files.predictions if i == item_id}
        found |= {s for run in self.runs for (i, s) in run.files.item_scores if i == item_id}
        return sorted(found) or [0]

    def frame_set(self, run: RunView, item_id: str, sample: int) -> FrameSet | None:
        """The frames of one prediction (decoding, when needed, happens outside the session lock)."""
        with self.lock:
            item = self.item(item_id)
            record = run.files.predictions.get((item_id, sample))
        if item is None:
            return None
        return self.frames.resolve(
            item,
            record.model if record is not None else None,
            run.sampler(item),
            dataset_root=run.dataset.root,
            cache_root=run.cache_root,
        )

    def dataset_root_for(self, item_id: str) -> Path | None:
        for run in self.runs:
            if item_id in run.dataset.items:
                return run.dataset.root
        return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
