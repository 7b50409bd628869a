"""Where time 0 of a video is, as the people who annotate it mean it.

A dataset's times ("the step starts at 12.5 s", a question's window [0, 40]) are read off a player,
which counts from the start of the file. For MP4, MOV, Matroska, WebM and AVI that is the
presentation timeline's zero: a file whose video starts later (an edit list's empty edit, a cut that
began on the next keyframe) really has nothing to show before its first frame. For formats that
carry a running clock instead - MPEG transport and program streams (camcorders, broadcast and
screen recorders write TS/M2TS/VOB starting wherever their clock stood, e.g. 601.4 s), FLV from a
live stream, raw elementary streams - the first timestamp is an accident of the recorder, and a
player (and `ffmpeg -ss`) counts from it. There, time 0 is the stream's first timestamp.
"""

from __future__ import annotations

from expvid.media.info import VideoInfo

#: ffmpeg demuxer names whose timestamps run on from wherever the recording's clock began.
RUNNING_CLOCK_FORMATS = frozenset(
    {"mpegts", "mpegtsraw", "mpeg", "mpegvideo", "flv", "h264", "hevc", "m4v", "vc1", "dv"}
)


def running_clock(container: str) -> bool:
    """Whether the container (ffmpeg's demuxer name, e.g. "mpegts" or "mov,mp4,m4a,3gp,3g2,mj2")
    keeps a running clock rather than a timeline starting at 0."""
    return any(name.strip() in RUNNING_CLOCK_FORMATS for name in container.split(","))


def timeline_origin(info: VideoInfo) -> float:
    """The pts (seconds) that a dataset's time 0 stands for in this video."""
    return info.start if running_clock(info.container) else 0.0
