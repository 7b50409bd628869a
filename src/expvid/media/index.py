"""A packet index of a video, built by demuxing only (no decoding).

Why: knowing every frame's pts, which packet codes it, where the keyframes are and which packets
nothing refers to lets the decoder know each target's exact frame and group of pictures (GOP)
before decoding anything, so it can seek once per GOP, decode only what the targets need, and never
decode a frame twice. It also measures the video from its packets instead of trusting the header
(`stream.frames` is 0 in MKV/WebM; durations are often wrong) and detects truncated files by
comparing what the header announces with what is actually there.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import av
import numpy as np

from expvid.media.container import check_file, corrupt, open_video
from expvid.media.errors import CorruptMediaError, EmptyMediaError, TruncatedMediaError
from expvid.media.fileid import FileIdentity, file_identity, settled
from expvid.media.h264 import non_reference_test
from expvid.media.info import VideoInfo
from expvid.media.timeline import running_clock

#: Times within this many seconds of a frame's pts count as that pts (float noise, not frames:
#: the finest common time base, 1/90000 s, is 11 microseconds).
TIME_EPSILON = 1e-9

#: The pts recorded for a packet that carries neither pts nor dts. Such packets are decoded (others
#: may refer to them) but never shown: with no time there is no moment to show them at. ffmpeg
#: writes them when an open-GOP clip is cut into Matroska (the leading pictures of the first GOP).
NO_TIMESTAMP = int(np.iinfo(np.int64).min)

#: Frame intervals, counted back from the end, that set how long the last frame lasts.
_END_INTERVALS = 16


@dataclass(frozen=True, eq=False)
class VideoIndex:
    """Every packet of the first video stream, in decode order, and the frames they present.

    "Frame i" is position i in presentation (pts) order from the stream start; `frame_packet[i]`
    is the decode-order position of the packet that codes it.
    """

    info: VideoInfo
    identity: FileIdentity
    time_base: Fraction
    packet_pts: np.ndarray  # int64, decode order
    packet_key: np.ndarray  # bool: keyframe (a decoder may start here)
    packet_skippable: np.ndarray  # bool: nothing refers to it (non-reference picture)
    packet_shown: np.ndarray  # bool: False for packets the decoder decodes but never outputs
    packet_pos: np.ndarray  # int64: byte position in the file (-1 when the format has none)
    frame_packet: np.ndarray  # int64: presentation index -> decode-order position
    frame_pts: np.ndarray  # int64, increasing
    frame_times: np.ndarray  # float64 seconds
    gop_start: np.ndarray  # int64: decode-order position of each GOP's first packet
    packet_gop: np.ndarray  # int64: decode-order position -> GOP number

    @cached_property
    def packet_frame(self) -> np.ndarray:
        """int64: decode-order position -> presentation index of the frame it codes (-1: not shown).

        The inverse of `frame_packet`. Not the pts: two frames may share a timestamp (a VFR stream
        remuxed into Matroska's 1 ms clock, a capture tool writing one time twice), and each is
        still its own frame, coded by its own packet.
        """
        inverse = np.full(len(self.packet_pts), -1, dtype=np.int64)
        inverse[self.frame_packet] = np.arange(len(self.frame_packet), dtype=np.int64)
        return inverse

    @property
    def num_packets(self) -> int:
        return len(self.packet_pts)

    def packet_position(self, packet: av.Packet, expected: int | None = None) -> int | None:
        """Decode-order position of a packet read from the file, or None if the index lacks it.

        Reading on from a known position, the packet is almost always the `expected` one (checked
        in O(1)); otherwise it is looked up by byte position (or pts where the format has none).
        """
        pos, pts = packet_identity(packet)
        if (
            expected is not None
            and expected < len(self.packet_pts)
            and self.packet_pts[expected] == pts
            and self.packet_pos[expected] == pos
        ):
            return expected
        keys, order = self._by_pos if pos >= 0 else self._by_pts
        wanted = pos if pos >= 0 else pts
        at = int(np.searchsorted(keys, wanted))
        while at < len(keys) and keys[at] == wanted:
            candidate = int(order[at])
            if self.packet_pts[candidate] == pts and self.packet_pos[candidate] == pos:
                return candidate
            at += 1
        return None

    @cached_property
    def _by_pos(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.packet_pos, kind="stable")
        return self.packet_pos[order], order

    @cached_property
    def _by_pts(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.packet_pts, kind="stable")
        return self.packet_pts[order], order

    def frames_at(self, times: np.ndarray | list[float]) -> np.ndarray:
        """Presentation index of the frame on screen at each time: the last frame with pts <= t.

        A time before the first frame gets the first frame (what a player shows at start).
        """
        wanted = np.asarray(times, dtype=np.float64) + TIME_EPSILON
        found = np.searchsorted(self.frame_times, wanted, side="right") - 1
        return np.maximum(found, 0)

    def frame_time(self, frame: int) -> float:
        return float(self.frame_times[frame])


def packet_identity(packet: av.Packet) -> tuple[int, int]:
    """(byte position, pts or else dts or `NO_TIMESTAMP`): how a packet read after a seek is found
    in the index."""
    pts = packet.pts if packet.pts is not None else packet.dts
    return (packet.pos if packet.pos is not None else -1, NO_TIMESTAMP if pts is None else pts)


def build_index(path: str | os.PathLike[str]) -> VideoIndex:
    """Demux `path` once and index its first video stream; raises a `MediaError` on bad files."""
    file = check_file(path)
    identity = file_identity(file)
    with open_video(file) as (container, stream):
        codec_context = stream.codec_context
        time_base = stream.time_base or Fraction(1, 1)
        is_skippable = non_reference_test(codec_context.name, codec_context.extradata)
        pts_list: list[int] = []
        key_list: list[bool] = []
        skip_list: list[bool] = []
        shown_list: list[bool] = []
        duration_list: list[int] = []
        pos_list: list[int] = []
        first = _FirstPicture(file, codec_context, is_skippable)
        try:
            for packet in container.demux(stream):
                if packet.size == 0:
                    continue  # the empty packet PyAV yields at end of file
                pos, pts = packet_identity(packet)
                pos_list.append(pos)
                pts_list.append(pts)
                key_list.append(bool(packet.is_keyframe))
                skip_list.append(is_skippable(packet))
                shown_list.append(pts != NO_TIMESTAMP and not packet.is_discard)
                duration_list.append(packet.duration or 0)
                if first.geometry is None:
                    first.feed(packet, len(pts_list) - 1)
        except av.FFmpegError as error:
            raise corrupt(file, f"reading video packets (after {len(pts_list)})", error) from None
        if not pts_list:
            raise EmptyMediaError(file, "the video stream holds no frames")
        rotation, frame_width, frame_height = first.finish(len(pts_list))
        aspect = pixel_aspect(stream.sample_aspect_ratio, first.aspect)
        declared_frames = stream.frames or 0
        declared_end = _declared_end(container, stream, time_base)
        declared_rate = stream.average_rate or stream.guessed_rate
        container_name = container.format.name

    packet_pts = np.asarray(pts_list, dtype=np.int64)
    packet_shown = np.asarray(shown_list, dtype=bool)
    shown_positions = np.flatnonzero(packet_shown)
    if len(shown_positions) == 0:
        untimed = sum(1 for pts in pts_list if pts == NO_TIMESTAMP)
        why = f" ({untimed} of {len(pts_list)} packets have no timestamp)" if untimed else ""
        raise EmptyMediaError(file, f"the video stream holds no displayed frames{why}")
    order = np.argsort(packet_pts[shown_positions], kind="stable")
    frame_packet = shown_positions[order]
    frame_pts = packet_pts[frame_packet]
    seconds = float(time_base)
    frame_times = frame_pts.astype(np.float64) * seconds

    intervals = np.diff(frame_pts)
    typical = median(intervals) if len(intervals) else 0.0
    last_duration = last_frame_duration(frame_pts)
    if last_duration is None:  # a single frame: only the container can say how long it lasts
        last_duration = float(duration_list[int(frame_packet[-1])])
        if last_duration <= 0:
            rate = declared_rate or Fraction(25)  # no hint at all: assume 25 fps
            last_duration = float(1 / (rate * time_base))
    start = float(frame_times[0])
    end = (int(frame_pts[-1]) + last_duration) * seconds
    count = len(frame_pts)

    if declared_frames > 0 and len(pts_list) < declared_frames:
        raise TruncatedMediaError(
            file, f"the container announces {declared_frames} frames but only {len(pts_list)} are present"
        )
    if declared_frames <= 0 and declared_end is not None:
        tolerance = 1.5 * typical * seconds + 0.01
        if end < declared_end - tolerance:
            raise TruncatedMediaError(
                file, f"the container announces {declared_end:.3f} s but the frames stop at {end:.3f} s"
            )

    packet_key = np.asarray(key_list, dtype=bool)
    gop_flags = packet_key.copy()
    gop_flags[0] = True
    gop_start = np.flatnonzero(gop_flags).astype(np.int64)
    packet_gop = np.cumsum(gop_flags).astype(np.int64) - 1

    rotation = rotation % 360
    swapped = rotation in (90, 270)
    # Non-square pixels: the picture is shown stretched horizontally by the sample aspect ratio
    # (ffmpeg's `scale=iw*sar:ih`), before any rotation.
    square_width = max(1, round(frame_width * aspect)) if aspect != 1 else frame_width
    width, height = (frame_height, square_width) if swapped else (square_width, frame_height)
    variable = bool(len(intervals) > 1 and (intervals.max() - intervals.min()) > max(1, 0.01 * typical))
    info = VideoInfo(
        path=str(file),
        container=container_name,
        codec=codec_context.name,
        width=width,
        height=height,
        coded_width=frame_width,
        coded_height=frame_height,
        rotation=rotation,
        num_frames=count,
        keyframes=int(packet_key.sum()),
        start=start,
        end=end,
        duration=end - start,
        fps=count / (end - start) if end > start else 0.0,
        variable_frame_rate=variable,
        time_base=f"{time_base.numerator}/{time_base.denominator}",
        size_bytes=identity.size,
        sample_aspect_ratio=f"{aspect.numerator}/{aspect.denominator}",
        timeline_origin=start if running_clock(container_name) else 0.0,
    )
    return VideoIndex(
        info=info,
        identity=identity,
        time_base=time_base,
        packet_pts=packet_pts,
        packet_key=packet_key,
        packet_skippable=np.asarray(skip_list, dtype=bool),
        packet_shown=packet_shown,
        packet_pos=np.asarray(pos_list, dtype=np.int64),
        frame_packet=frame_packet.astype(np.int64),
        frame_pts=frame_pts,
        frame_times=frame_times,
        gop_start=gop_start,
        packet_gop=packet_gop,
    )


class _FirstPicture:
    """Decodes the packets read while indexing until the first picture comes out of the decoder.

    Why until the first picture and not a fixed number of packets: a clip cut without re-encoding
    (`ffmpeg -ss 3.3 -i in.mp4 -c copy cut.mp4`) starts at the keyframe before the cut and marks
    up to a whole GOP of packets "decode but do not show" (an edit list), so no picture comes out
    before the first shown one; an open-GOP or frame-threaded decoder also delays its output. PyAV
    exposes a file's rotation only on decoded frames, and a stream nothing can decode must be
    refused here, not in the middle of an evaluation. Pre-roll packets that nothing refers to
    (hidden non-reference B-frames) are not decoded at all: they could never be shown.
    """

    def __init__(
        self, file: os.PathLike[str], context: av.VideoCodecContext, is_skippable: Callable[[av.Packet], bool]
    ) -> None:
        self.file = file
        self.context = context
        self.is_skippable = is_skippable
        self.geometry: tuple[int, int, int] | None = None  # (rotation, width, height)
        #: The sample aspect ratio the decoder reports with the first picture (None: unset).
        self.aspect: Fraction | None = None
        self.sent = 0

    def feed(self, packet: av.Packet, position: int) -> None:
        hidden = packet.is_discard or (packet.pts is None and packet.dts is None)
        if hidden and self.is_skippable(packet):
            return
        self.sent += 1
        try:
            frames = self.context.decode(packet)
        except av.FFmpegError as error:
            pts = packet_identity(packet)[1]
            timed = pts != NO_TIMESTAMP and packet.time_base
            when = f", t={float(pts * packet.time_base):.3f} s" if timed else ""
            raise corrupt(
                self.file, f"decoding the first picture (video packet {position}{when})", error
            ) from None
        if frames:
            self._found(frames[0])

    def finish(self, packets: int) -> tuple[int, int, int]:
        """The geometry, after draining the decoder if no picture came out while feeding."""
        try:
            if self.geometry is None:
                frames = self.context.decode(None)
                if frames:
                    self._found(frames[0])
        except av.FFmpegError as error:
            raise corrupt(self.file, "decoding the first picture (end of stream)", error) from None
        finally:
            self.context.flush_buffers()
        if self.geometry is None:
            raise CorruptMediaError(
                self.file, f"none of the {packets} video packets decodes to a picture ({self.sent} decoded)"
            )
        return self.geometry

    def _found(self, frame: av.VideoFrame) -> None:
        self.geometry = (int(frame.rotation or 0), frame.width, frame.height)
        self.aspect = self.context.sample_aspect_ratio
        self.context.flush_buffers()


def pixel_aspect(container: Fraction | None, codec: Fraction | None) -> Fraction:
    """The sample aspect ratio a player uses: the container's when it states one (an MP4 `pasp`
    box, Matroska's display size), else the bitstream's (H.264 VUI, MPEG-2 sequence header), else 1.
    The same preference as ffmpeg's `av_guess_sample_aspect_ratio`; nonsense values count as unset."""
    for value in (container, codec):
        if value is not None and value > 0 and Fraction(1, 16) <= value <= 16:
            return Fraction(value)
    return Fraction(1)


def median(values: np.ndarray) -> float:
    """The median of a non-empty array, as `np.median` computes it. Not `np.median` itself: its NaN
    check imports `numpy.ma`, 10-15 ms of every cold `expvid frames` (timestamps are never NaN)."""
    ordered = np.sort(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (float(ordered[middle - 1]) + float(ordered[middle])) / 2


def last_frame_duration(frame_pts: np.ndarray) -> float | None:
    """How long the last frame is shown, in time-base ticks, from the frames' own timestamps.

    Why not the container's word: containers disagree about the same stream. MP4 stores the last
    sample's duration (often the encoder's nominal rate), Matroska/WebM usually store none or a
    rounded default, so one variable-frame-rate stream "ended" at 15.000 s as MP4 and 15.010 s as
    MKV, and uniform sampling over [start, end] chose different frames. The rule here reads only
    presentation timestamps, which every remux keeps: the last frame lasts as long as the frames
    just before it, i.e. the mean of the last `_END_INTERVALS` intervals, ignoring intervals more
    than 25% away from their median (a dropped frame, a gap at a cut). The mean, not the median,
    so that timestamps rounded to a coarse time base (1 ms in Matroska: 33, 34, 33 ms at 30 fps)
    still give the true interval to within a fraction of a tick. None for a single frame.
    """
    recent = np.diff(frame_pts[-(_END_INTERVALS + 1) :]).astype(np.float64)
    recent = recent[recent > 0]
    if len(recent) == 0:
        return None
    middle = median(recent)
    near = recent[np.abs(recent - middle) <= 0.25 * middle]
    return float(near.mean())


def _declared_end(
    container: av.container.InputContainer, stream: av.VideoStream, time_base: Fraction
) -> float | None:
    """The end time the header announces for the video stream, when it announces one."""
    start = float(stream.start_time * time_base) if stream.start_time is not None else 0.0
    if stream.duration:
        return start + float(stream.duration * time_base)
    tag = stream.metadata.get("DURATION") or stream.metadata.get("duration")
    if tag:
        seconds = _parse_clock(tag)
        if seconds is not None:
            return seconds
    if len(container.streams) == 1 and container.duration:
        origin = container.start_time / av.time_base if container.start_time is not None else 0.0
        return origin + container.duration / av.time_base
    return None


def _parse_clock(text: str) -> float | None:
    """'HH:MM:SS.fffffffff' (Matroska DURATION tag) -> seconds."""
    try:
        hours, minutes, secs = text.strip().split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(secs)
    except ValueError:
        return None


class _IndexMemo:
    """Indexes of recently used files, keyed by file identity (a rewrite invalidates the entry)."""

    def __init__(self, capacity: int = 16) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[FileIdentity, VideoIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str | os.PathLike[str]) -> VideoIndex:
        check_file(path)
        identity = file_identity(path)
        with self._lock:
            found = self._entries.get(identity)
            if found is not None:
                self._entries.move_to_end(identity)
                return found
        looked_at = time.time_ns()
        index = build_index(path)
        if not settled(index.identity, looked_at):
            return index  # changed a moment ago: may change again within the same ctime tick
        with self._lock:
            self._entries[index.identity] = index
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
        return index

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_memo = _IndexMemo()


def load_index(path: str | os.PathLike[str]) -> VideoIndex:
    """The index of `path`, built once per file version per process."""
    return _memo.get(path)


def clear_index_memo() -> None:
    """Forget remembered indexes (tests; long-lived processes that rewrite files in place)."""
    _memo.clear()
