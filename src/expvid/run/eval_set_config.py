"""`expvid eval-set CONFIG.yaml`: the file, and how each (model, suite, setting) cell becomes an `EvalConfig`.

    out: runs/table3                   # campaign root: runs/, views/, report.md, leaderboard.html
    cache_dir: /scratch/expvid-cache   # shared frame and response cache (default: expvid's)
    references: all                    # the paper's rows in the tables: all, none, or model names
    max_cost: 150                      # USD for the whole set, shared by every cell
    retries: 2                         # a failed cell is run again as a whole this many times
    parallel_cells: 2                  # cells run at once (each with its own concurrency)
    suites:
      - name: expvid
        data: /data/ExpVid             # or hf:ORG/NAME[@REV]
        tasks: [tools, materials]      # optional; limit: N (records per task) too
        settings:                      # named settings, by the keys of `-S KEY=VALUE`
          default: {}
          asr: {with_asr: true}
    models:
      - name: GPT-4o                   # row label and directory name
        model: openai:gpt-4o
        frame_preset: gpt-4o           # the paper's frames for this model (ExpVid Table 3)
        concurrency: 16
        price: [2.5, 10, 1.25]         # USD per 1M tokens in, out[, cached in], over the price table
        batch: true                    # or {wait: false, retry: batch, ...}
        max_cost: 40                   # this cell's budget (the set's own: max_cost at the top)
      - name: Qwen2.5-VL-7B
        model: openai:Qwen2.5-VL-7B-Instruct
        base_url: [http://gpu1:8000/v1, http://gpu2:8000/v1]
        frame_preset: qwen2.5-vl
      - name: Qwen2.5-VL-7B (no frames)
        model: openai:Qwen2.5-VL-7B-Instruct
        base_url: http://gpu1:8000/v1
        frames_control: none           # a control run for `expvid audit --runs` (none, single, shuffled)

Each cell is one run directory (`out/runs/<suite>/<setting>/<model>`) with the identity and resume
rules of `expvid eval`: running the file again resumes every cell where it stopped.

Suite settings are those of `expvid eval -S KEY=VALUE` (`expvid suites show NAME` lists them), checked
by the suite's settings model before any cell runs; a model's `frame_preset` is the `-S frame_preset`
setting of every cell it is in (its own `frames` and `size` on top).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from expvid.models.pricing import Price
from expvid.models.types import ThinkingConfig
from expvid.run.batch_settings import BatchSettings
from expvid.run.config import EvalConfig
from expvid.schema import DataError, FramesControl
from expvid.suites.protocol import FrameOptions


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    model: str
    frame_preset: str | None = None
    #: Frames per level or task ("L3": 64), over the preset.
    frames: dict[str, int] = Field(default_factory=dict)
    size: int | None = None
    max_side: int | None = None
    concurrency: int | None = Field(default=None, ge=1)
    base_url: str | list[str] | None = None
    api_key_env: str | None = None
    api: Literal["chat", "responses"] | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    backend_options: dict[str, Any] = Field(default_factory=dict)
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    #: A control run for `expvid audit` (`--frames-control`): none, single or shuffled frames.
    frames_control: FramesControl = "full"
    thinking: ThinkingConfig | None = None
    #: USD per 1M tokens (input, output[, cached input]), over the price table.
    price: tuple[float, float] | tuple[float, float, float] | None = None
    batch: BatchSettings | bool = False
    max_cost: float | None = Field(default=None, gt=0)
    max_tokens_total: int | None = Field(default=None, gt=0)

    @field_validator("name")
    @classmethod
    def _usable_name(cls, value: str) -> str:
        if not slug(value):
            raise ValueError(f"model name {value!r} has no letters or digits")
        return value


def _default_settings() -> dict[str, dict[str, Any]]:
    return {"default": {}}


class SuiteEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    data: str
    tasks: list[str] | None = None
    limit: int | None = Field(default=None, ge=1)
    #: Named settings, each a mapping of `-S` keys to values.
    settings: dict[str, dict[str, Any]] = Field(default_factory=_default_settings)
    judge: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str | None = None


class EvalSetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    out: Path
    cache_dir: Path | None = None
    suites: list[SuiteEntry]
    models: list[ModelEntry]
    references: Literal["all", "none"] | list[str] = "all"
    retries: int = Field(default=2, ge=0)
    #: One budget for the whole set, shared by its cells (each prices its requests at its model's
    #: price), on top of any cell's own `max_cost` / `max_tokens_total`.
    max_cost: float | None = Field(default=None, gt=0)
    max_tokens_total: int | None = Field(default=None, gt=0)
    #: Seconds before a failed cell runs again (doubling each time).
    retry_wait_s: float = Field(default=30.0, ge=0)
    parallel_cells: int = Field(default=1, ge=1)
    decode_workers: int = Field(default=2, ge=1)
    seed: int = 0
    samples: int = Field(default=1, ge=1)
    n_bootstrap: int = Field(default=2000, ge=0)
    #: Export each cell's viewer page (`expvid view --export`) for the leaderboard's links.
    view_exports: bool = True
    view_frames: bool = False


def slug(text: str) -> str:
    """A directory-safe name: letters, digits, '.', '_' and '-' (others become '-')."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")


def load_eval_set(path: Path) -> EvalSetConfig:
    """Read CONFIG.yaml; one-line errors naming the file and the setting."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DataError(f"{path}: cannot read it ({error.strerror or error})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise DataError(f"{path}{where}: not valid YAML ({getattr(error, 'problem', error)})") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected a mapping with out, suites and models")
    try:
        config = EvalSetConfig.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise DataError(f"{path}: {where}: {first['msg']}") from None
    if not config.out.is_absolute():
        config = config.model_copy(update={"out": (path.parent / config.out).resolve()})
    for kind, names in (
        ("model", [m.name for m in config.models]),
        ("suite", [s.name for s in config.suites]),
    ):
        seen = {slug(name) for name in names}
        if len(seen) != len(names):
            raise DataError(f"{path}: two {kind}s share a name (names must differ as directory names)")
    return config


@dataclass(frozen=True)
class Cell:
    suite: SuiteEntry
    setting: str
    model: ModelEntry

    @property
    def id(self) -> str:
        return f"{self.suite.name}/{self.setting}/{self.model.name}"

    def run_dir(self, out: Path) -> Path:
        return out / "runs" / slug(self.suite.name) / slug(self.setting) / slug(self.model.name)

    def view_file(self, out: Path) -> Path:
        return out / "views" / f"{slug(self.suite.name)}__{slug(self.setting)}__{slug(self.model.name)}.html"


def cells_of(config: EvalSetConfig, only: list[str] | None = None) -> list[Cell]:
    """Every (suite, setting, model) cell, in file order; `only` keeps cells whose id contains one of
    the given strings."""
    cells = [
        Cell(suite, setting, model)
        for suite in config.suites
        for setting in suite.settings
        for model in config.models
    ]
    if only:
        cells = [cell for cell in cells if any(part in cell.id for part in only)]
    return cells


def cell_settings(cell: Cell) -> dict[str, Any]:
    """The cell's `-S` settings: its suite setting's, and the model's frame preset."""
    settings = dict(cell.suite.settings[cell.setting])
    if cell.model.frame_preset is not None:
        settings.setdefault("frame_preset", cell.model.frame_preset)
    return settings


def cell_frames(cell: Cell) -> FrameOptions:
    """The model's own frame counts and size (over its preset, as `--frames` / `--size` are)."""
    model = cell.model
    explicit: dict[str, Any] = {"counts": dict(model.frames)}
    if model.size is not None or model.max_side is not None:
        explicit.update(size=model.size, max_side=model.max_side)
    return FrameOptions(**explicit)


#: The settings of a cell's `EvalConfig` taken as given, under the same names: the model's, the
#: set's and the suite entry's.
_FROM_MODEL = {
    "model",
    "temperature",
    "max_tokens",
    "thinking",
    "frames_control",
    "max_cost",
    "max_tokens_total",
}
_FROM_SET = {"seed", "n_bootstrap", "decode_workers", "samples", "cache_dir"}
_FROM_SUITE = {"tasks", "limit", "judge", "judge_base_url", "judge_api_key_env"}


def cell_config(config: EvalSetConfig, cell: Cell, data_root: Path) -> EvalConfig:
    """The `EvalConfig` of one cell: what `expvid eval` would run for it."""
    model = cell.model
    backend: dict[str, Any] = dict(model.backend_options)
    if isinstance(model.base_url, list):
        backend["base_urls"] = list(model.base_url)
    elif model.base_url is not None:
        backend["base_url"] = model.base_url
    for key, value in (
        ("api_key_env", model.api_key_env),
        ("api", model.api),
        ("timeout_s", model.timeout_s),
    ):
        if value is not None:
            backend[key] = value
    batch = (
        model.batch if isinstance(model.batch, BatchSettings) else (BatchSettings() if model.batch else None)
    )
    prices = {}
    if model.price is not None:
        source = f"eval-set price for {model.name}: " + ",".join(f"{value:g}" for value in model.price)
        cached = model.price[2] if len(model.price) == 3 else None
        prices[""] = Price(
            input_per_m=model.price[0], output_per_m=model.price[1], cached_input_per_m=cached, source=source
        )
    try:
        return EvalConfig(
            **model.model_dump(include=_FROM_MODEL),
            **config.model_dump(include=_FROM_SET),
            **cell.suite.model_dump(include=_FROM_SUITE),
            suite=cell.suite.name,
            data=data_root,
            out=cell.run_dir(config.out),
            concurrency=model.concurrency or 8,
            frames=cell_frames(cell),
            backend_options=backend,
            suite_settings=cell_settings(cell),
            prices=prices,
            batch=batch,
        )
    except ValidationError as error:
        first = error.errors()[0]
        raise DataError(f"{cell.id}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def config_digest(config: EvalConfig) -> str:
    """A digest of a cell's settings: a cell finished with the same digest is not run again."""
    settings = config.model_dump(mode="json")
    if settings.get("frames_control") == "full":  # cells digested before the setting existed stay done
        settings.pop("frames_control")
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
