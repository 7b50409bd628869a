"""`VideoInfo`: what a video is, measured from its packets rather than trusted from its header."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class VideoInfo:
    """Facts about a video's first video stream.

    Times are seconds on the stream's presentation timeline (pts x time base), the clock a player
    shows for files starting at 0. `start` is the first frame's time, `end` the last frame's time
    plus its duration, `duration = end - start`; the last frame's duration is read from the frames'
    own timestamps (`index.last_frame_duration`), never from the container, so the same stream has
    the same end as MP4, MOV, MKV or WebM (within the 1 ms clock of the last two). `width`/`height` are the display size, after the
    rotation in `rotation` (degrees counter-clockwise, 0/90/180/270) is applied; `coded_width` /
    `coded_height` are the stored size. The display size honours non-square pixels: a 720x576
    picture with a sample aspect ratio (`sample_aspect_ratio`) of 64/45 (PAL 16:9) is 1024x576, as
    a player shows it. `fps` is the average rate (frames / duration); check `variable_frame_rate`
    before assuming frame i is at i / fps. `timeline_origin` is the pts that a dataset's time 0
    stands for (`media.timeline`): the first frame's time for running-clock formats (MPEG-TS), else
    0; sampled frames report their times from it.
    """

    path: str
    container: str
    codec: str
    width: int
    height: int
    coded_width: int
    coded_height: int
    rotation: int
    num_frames: int
    keyframes: int
    start: float
    end: float
    duration: float
    fps: float
    variable_frame_rate: bool
    time_base: str
    size_bytes: int
    sample_aspect_ratio: str = "1/1"
    timeline_origin: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (for the CLI, the frame cache and run logs)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VideoInfo:
        return cls(**data)
