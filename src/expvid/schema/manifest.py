"""The run manifest: everything needed to know how a run's numbers were produced."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from expvid.schema.records import utc_now

#: What a run shows the model of each item's frames: all of them as sampled ("full", the default),
#: none ("none": the frames are sampled and logged, the request carries only the text; what the
#: `blind:` model spec has always done), the middle frame only ("single": one frame at the middle
#: of the item's video or window), or all of them in a seeded order that is never the original
#: ("shuffled"). The three controls are how `expvid audit` measures multi-modal gain, leakage,
#: single-frame sufficiency and order sensitivity (`expvid eval --frames-control`).
FramesControl = Literal["full", "none", "single", "shuffled"]
FRAMES_CONTROLS: tuple[str, ...] = ("full", "none", "single", "shuffled")


def frames_control_of(model: str, control: str | None) -> str:
    """The control a run really applied: "none" for a `blind:` model, else the setting ("full" when
    a run directory made before the setting existed recorded none)."""
    if model.strip().startswith("blind:"):
        return "none"
    return control if control in FRAMES_CONTROLS else "full"


class SamplerSettings(BaseModel):
    """How frames were chosen and encoded; identical for every model in a comparison."""

    #: "uniform" (midpoints of N equal segments), "linspace" (N frame positions from the first to
    #: the last frame, lmms-eval's choice), "fps" (capped, thinned uniformly) or "fps_keep_last"
    #: (capped by thinning from the end so the last frame stays, as some official scorers do).
    strategy: Literal["uniform", "linspace", "fps", "fps_keep_last"] = "uniform"
    num_frames: int | None = None
    fps: float | None = None
    max_frames: int | None = None
    size: int | None = 224  # square side; None keeps the source size
    max_side: int | None = None  # keep aspect ratio, longest side at most this
    image_format: str = "jpeg"
    jpeg_quality: int = 90


class JudgeSettings(BaseModel):
    name: str
    model: str | None = None
    endpoint: str | None = None
    prompt: str | None = None
    threshold: float | None = None
    offline: bool = False


class RunManifest(BaseModel):
    """`manifest.json` of a run directory."""

    suite: str
    model: str
    command: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    samplers: dict[str, SamplerSettings] = Field(default_factory=dict)
    judge: JudgeSettings | None = None
    dataset_root: str | None = None
    #: sha256 over the annotation files and the media (names and sizes) in `dataset_media`. Run
    #: directories made before media were fingerprinted hold the annotations-only hash here and
    #: have no `annotations_fingerprint`.
    dataset_fingerprint: str | None = None
    #: sha256 over the annotation files only (what scoring needs; no media required).
    annotations_fingerprint: str | None = None
    #: Media file (relative to the dataset root) -> size in bytes, None when it was missing. A file
    #: once seen keeps its size here, so resuming after the rest of a download arrives is allowed
    #: but a file that changed size is not.
    dataset_media: dict[str, int | None] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)

    @property
    def frames_control(self) -> str:
        """The frames control the run applied (`FramesControl`), from its recorded settings."""
        settings = self.config.get("settings")
        recorded = settings.get("frames_control") if isinstance(settings, dict) else None
        return frames_control_of(self.model, recorded if isinstance(recorded, str) else None)
