"""Decode exactly the frames asked for, in order, touching each group of pictures (GOP) at most once.

Why like this (each point is measured in tests through `DecodeStats`):

- The packet index says, before any decoding, which packet codes each target frame and which GOP
  it lives in. Targets are grouped into *units*: a keyframe and the packets up to the last target of
  that GOP. A unit is entered with one seek, or with none when it starts at the next keyframe after
  where the decoder already is (the rule TorchCodec calls canWeAvoidSeeking); then, if reference
  pictures were skipped on the way, the decoder is reset at that keyframe as a seek would (an
  open-GOP keyframe's leading pictures refer to them).
- Inside a unit only the packets a target depends on are sent to the decoder: reference pictures
  and the targets themselves. Non-reference pictures (most B-frames) are skipped unless wanted, and
  nothing after the last target of a GOP is decoded.
- Decoded pictures are matched to targets by the packet that coded them (each packet sent to the
  decoder carries its decode-order position as `opaque`, which FFmpeg copies onto the picture it
  yields), so the frame returned is exactly the one a full decode would show, even where two
  frames share a timestamp (then matching by pts alone finds one picture for two frames). Where a
  decoder drops the opaque value, pictures are matched by pts, in decode order among equal ones.
  The conversion callback runs as each target comes out of the decoder, so only small converted
  images are kept.
- Two decoders in threads take units from one queue, the costliest first, so both cores work on
  one video (PyAV releases the GIL while decoding and scaling) and finish within the cheapest
  unit of each other; one decoder alone takes them in decode order and reads on without seeking.
- A target the decoder does not produce (a damaged stream, a keyframe the decoder cannot start
  from) is retried once from two keyframes earlier, then reported as an error: never a silently
  missing or substituted frame. Open-GOP leading pictures (shown before their keyframe, predicted
  from the previous GOP) are known from the index and start from the previous keyframe directly.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Generic, TypeVar

import av
import av.container

from expvid.media.container import corrupt, open_video
from expvid.media.errors import CorruptMediaError, TruncatedMediaError
from expvid.media.index import NO_TIMESTAMP, VideoIndex

T = TypeVar("T")

#: How many earlier GOPs a retry for a missing frame may start from.
_RETRY_GOPS_BACK = 2


@dataclass
class DecodeStats:
    """What decoding cost, so tests can prove the access pattern and benchmarks can explain times."""

    seeks: int = 0
    packets_demuxed: int = 0  # packets read from the file while decoding
    packets_sent: int = 0  # packets given to the decoder
    packets_skipped: int = 0  # packets read but not decoded (not needed by any target)
    frames_decoded: int = 0  # pictures the decoder produced
    frames_converted: int = 0  # target pictures converted (each distinct frame once)
    duplicate_frames: int = 0  # pictures decoded more than once (only on retries)
    gops_decoded: int = 0  # distinct GOPs the decoder entered
    units: int = 0  # decoding units (one keyframe each, or a merged open-GOP span)
    retries: int = 0  # units re-decoded from an earlier keyframe because a target was missing
    workers: int = 0  # decoders used in parallel

    def add(self, other: DecodeStats) -> None:
        for item in fields(self):
            if item.name != "workers":
                setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def to_dict(self) -> dict[str, int]:
        return {item.name: int(getattr(self, item.name)) for item in fields(self)}


@dataclass
class DecodeUnit:
    """A run of packets in decode order, entered at a keyframe: [start, end], plus its targets."""

    start: int
    end: int
    targets: set[int] = field(default_factory=set)  # decode-order positions of target packets


@dataclass
class DecodeResult(Generic[T]):
    """Converted target frames by presentation index, and what it cost."""

    frames: dict[int, T]
    stats: DecodeStats


def plan_units(index: VideoIndex, frames: Sequence[int]) -> list[DecodeUnit]:
    """Group target frames (presentation indices) into decoding units, in decode order."""
    by_start: dict[int, DecodeUnit] = {}
    for frame in sorted(set(frames)):
        packet = int(index.frame_packet[frame])
        gop = int(index.packet_gop[packet])
        start = int(index.gop_start[gop])
        if gop > 0 and index.packet_pts[packet] < index.packet_pts[start]:
            # A leading picture of an open GOP refers to the previous GOP: start there.
            start = int(index.gop_start[gop - 1])
        unit = by_start.setdefault(start, DecodeUnit(start, packet))
        unit.end = max(unit.end, packet)
        unit.targets.add(packet)
    merged: list[DecodeUnit] = []
    for unit in sorted(by_start.values(), key=lambda item: item.start):
        if merged and unit.start <= merged[-1].end:
            merged[-1].end = max(merged[-1].end, unit.end)
            merged[-1].targets |= unit.targets
        else:
            merged.append(unit)
    return merged


def _unit_cost(index: VideoIndex, unit: DecodeUnit) -> int:
    """Packets the unit sends to the decoder (the work it costs)."""
    span = index.packet_skippable[unit.start : unit.end + 1]
    return int((~span).sum()) + sum(1 for packet in unit.targets if index.packet_skippable[packet])


def _unit_order(index: VideoIndex, units: list[DecodeUnit], workers: int) -> list[DecodeUnit]:
    """The order units are handed out in: decode order for one decoder (it reads on from one GOP
    into the next without seeking); the costliest first for several, so the last units handed out
    are the cheapest and the decoders finish close together."""
    if workers <= 1:
        return units
    return sorted(units, key=lambda unit: _unit_cost(index, unit), reverse=True)


class _UnitQueue:
    """Units handed out one at a time to whichever decoder is free (list scheduling).

    Why not split the units into one contiguous run per decoder up front: a run's work is known
    only roughly before decoding (a GOP's pictures cost 1 to 12 ms each), and with a few dozen
    units of very different sizes (a target early or late in its GOP) one decoder was left working
    alone at the end. Seeking costs well under a millisecond in MP4, Matroska and MPEG-TS alike.
    """

    def __init__(self, units: list[DecodeUnit]) -> None:
        self._units = deque(units)
        self._lock = threading.Lock()

    def take(self) -> DecodeUnit | None:
        with self._lock:
            return self._units.popleft() if self._units else None


class _Worker(Generic[T]):
    """One decoder, with its own container (file handle), decoding units taken from a shared queue."""

    def __init__(
        self,
        path: str,
        index: VideoIndex,
        convert: Callable[[av.VideoFrame], T],
        queue: _UnitQueue,
        threads: int,
    ) -> None:
        self.path = path
        self.index = index
        self.convert = convert
        self.queue = queue
        self.units: list[DecodeUnit] = []  # the units this decoder took, in the order it decoded them
        self.threads = threads
        # Decode-order position of each target packet of its units -> the presentation index of its frame.
        self.wanted: dict[int, int] = {}
        # For decoders that do not pass `opaque` on: pts -> packets sent with it, in decode order.
        self.sent_by_pts: dict[int, list[int]] = {}
        self.stats = DecodeStats(workers=1)
        self.results: dict[int, T] = {}
        self.seen_packets: set[int] = set()
        self.seen_gops: set[int] = set()
        # Where decoding is, so a failure can say which frame and time it was working on.
        self.position: int | None = None  # decode-order position of the packet last read
        self.unit: DecodeUnit | None = None

    def run(self) -> DecodeResult[T]:
        with open_video(self.path) as (container, stream):
            context = stream.codec_context
            context.thread_type = "AUTO" if self.threads != 1 else "SLICE"
            context.thread_count = self.threads
            context.copy_opaque = True  # each picture says which packet coded it (see `_take`)
            try:
                self._decode_units(container, stream, iter(self._take_unit, None), fresh=True)
                incomplete = [unit for unit in self.units if self._missing(unit)]
                if incomplete:
                    self._retry(container, stream, incomplete)
            except av.FFmpegError as error:
                raise corrupt(self.path, self._where(), error) from None
        return DecodeResult(self.results, self.stats)

    def _take_unit(self) -> DecodeUnit | None:
        """The next unit from the queue, its targets now this decoder's (None: nothing left)."""
        unit = self.queue.take()
        if unit is not None:
            self.units.append(unit)
            for packet in unit.targets:
                self.wanted[packet] = _frame_of_packet(self.index, packet)
        return unit

    def _where(self) -> str:
        """'decoding frame 61 (t=2.033 s, for frame 65 at t=2.167 s)': where an error happened."""
        if self.position is None:
            return "decoding (before the first packet was read)"
        index = self.index
        position = min(self.position, index.num_packets - 1)
        where = describe_packet(index, position)
        if self.unit is not None:
            ahead = sorted(packet for packet in self.unit.targets if packet >= position)
            if ahead and ahead[0] != position:
                target = _frame_of_packet(index, ahead[0])
                where = f"{where[:-1]}, for frame {target} at t={index.frame_time(target):.3f} s)"
        return f"decoding {where}"

    def _missing(self, unit: DecodeUnit) -> set[int]:
        """Target packets of `unit` whose picture has not come out of the decoder."""
        return {packet for packet in unit.targets if self.wanted[packet] not in self.results}

    def _retry(
        self, container: av.container.InputContainer, stream: av.VideoStream, units: list[DecodeUnit]
    ) -> None:
        """Decode units with missing targets again from an earlier keyframe; error if still missing."""
        index = self.index
        retry_units = []
        for unit in units:
            gop = int(index.packet_gop[unit.start])
            start = int(index.gop_start[max(0, gop - _RETRY_GOPS_BACK)])
            retry_units.append(DecodeUnit(start, unit.end, self._missing(unit)))
        self.stats.retries += len(retry_units)
        self._decode_units(container, stream, retry_units, fresh=False)
        for unit in retry_units:
            lost = sorted(self._missing(unit))
            if lost:
                frame = self.wanted[lost[0]]
                raise CorruptMediaError(
                    self.path,
                    f"the decoder produced no picture for frame {frame} "
                    f"(t={index.frame_time(frame):.3f} s): damaged or truncated stream",
                )

    def _decode_units(
        self,
        container: av.container.InputContainer,
        stream: av.VideoStream,
        units: Iterable[DecodeUnit],
        *,
        fresh: bool,
    ) -> None:
        context = stream.codec_context
        position: int | None = 0 if fresh else None  # decode-order position of the next packet to read
        packets: Iterator[av.Packet] = container.demux(stream)
        for unit in units:
            self.stats.units += 1
            self.unit = unit
            entered = None
            if position is not None and self._can_continue(position, unit.start):
                entered = self._feed_unit(context, packets, unit, expected=position)
            if entered is None:
                self._drain(context)
                for key_packet in self._seek_points(unit.start):
                    self._seek(container, stream, key_packet)
                    packets = container.demux(stream)
                    entered = self._feed_unit(context, packets, unit, expected=key_packet)
                    if entered is not None:
                        break
                else:
                    raise CorruptMediaError(self.path, f"cannot seek to the keyframe at packet {unit.start}")
            position = entered
        self._drain(context)

    def _seek_points(self, start: int) -> list[int]:
        """Keyframes to seek to for a unit starting at `start`: its own, the one before, the first."""
        gop = int(self.index.packet_gop[start])
        points = [start, int(self.index.gop_start[max(0, gop - 1)]), int(self.index.gop_start[0])]
        return list(dict.fromkeys(points))

    def _can_continue(self, position: int, start: int) -> bool:
        """True when reading on from `position` reaches `start` without crossing a whole GOP."""
        if position > start:
            return False
        return int(self.index.packet_gop[start]) - int(self.index.packet_gop[position]) <= 1

    def _seek(self, container: av.container.InputContainer, stream: av.VideoStream, key_packet: int) -> None:
        self.stats.seeks += 1
        container.seek(int(self.index.packet_pts[key_packet]), stream=stream, backward=True, any_frame=False)

    def _feed_unit(
        self, context: av.VideoCodecContext, packets: Iterator[av.Packet], unit: DecodeUnit, expected: int
    ) -> int | None:
        """Send the unit's needed packets; the position after the unit, or None if reading started
        past the unit's keyframe (a seek that overshot: the caller seeks earlier).

        Reading on without a seek skips the rest of the previous GOP. If any skipped packet was a
        reference picture, the decoder is drained and reset before the unit's keyframe, exactly
        as after a seek: an open-GOP keyframe's leading pictures refer to the skipped pictures,
        and a decoder that has not been told of the gap decodes them (and, through its
        reference list, later pictures) from the wrong references instead of recovering.
        """
        index = self.index
        skippable = index.packet_skippable
        entered = False
        skipped_reference = False
        for packet in packets:
            if packet.size == 0:
                break  # end of file
            self.stats.packets_demuxed += 1
            position = index.packet_position(packet, expected)
            expected = (position if position is not None else expected) + 1
            if position is None:
                raise CorruptMediaError(
                    self.path, "found a packet not seen when indexing: was the file replaced?"
                )
            self.position = position
            if position < unit.start:
                self.stats.packets_skipped += 1
                skipped_reference = skipped_reference or not skippable[position]
                continue
            if not entered:
                if position != unit.start:
                    return None
                entered = True
                if skipped_reference:
                    self._drain(context)
            if position in unit.targets or not skippable[position]:
                self.stats.packets_sent += 1
                gop = int(index.packet_gop[position])
                if gop not in self.seen_gops:
                    self.seen_gops.add(gop)
                packet.opaque = _tag(position)
                self.sent_by_pts.setdefault(int(index.packet_pts[position]), []).append(position)
                for frame in context.decode(packet):
                    self._take(frame)
            else:
                self.stats.packets_skipped += 1
            if position >= unit.end:
                return position + 1
        raise TruncatedMediaError(
            self.path,
            f"the file ended before packet {unit.end} of the {index.num_packets} listed when indexing",
        )

    def _drain(self, context: av.VideoCodecContext) -> None:
        """Collect the pictures the decoder still holds, then reset it (before a seek, at the end)."""
        if not context.is_open:
            return
        for frame in context.decode(None):
            self._take(frame)
        context.flush_buffers()

    def _take(self, frame: av.VideoFrame) -> None:
        """Account for a decoded picture; convert it if it is a target not yet converted."""
        self.stats.frames_decoded += 1
        packet = self._packet_of(frame)
        if packet is None:
            return  # no time to show it at, so never a target (a missing target is reported later)
        if packet in self.seen_packets:
            self.stats.duplicate_frames += 1
            return
        self.seen_packets.add(packet)
        frame_index = self.wanted.get(packet)
        if frame_index is not None and frame_index not in self.results:
            self.results[frame_index] = self.convert(frame)
            self.stats.frames_converted += 1

    def _packet_of(self, frame: av.VideoFrame) -> int | None:
        """The decode-order position of the packet that coded `frame` (its `opaque`); failing that,
        the earliest packet sent with the frame's pts whose picture has not come out yet."""
        position = tagged_position(frame)
        if position is not None:
            return position
        if frame.pts is None:
            return None
        sent = self.sent_by_pts.get(int(frame.pts), [])
        fresh = [packet for packet in sent if packet not in self.seen_packets]
        if fresh:
            return fresh[0]
        return sent[-1] if sent else None


def _tag(position: int) -> tuple[int]:
    """A packet's `opaque` value: its position, in an object of its own. PyAV files opaque values
    under the object's id and drops that entry when any buffer holding it is freed; small ints are
    shared objects (position 5 of two videos decoded at once), so a bare int could vanish from under
    the other decoder's picture."""
    return (position,)


def tagged_position(frame: av.VideoFrame) -> int | None:
    """The decode-order position `_tag` put on the packet that coded `frame`, or None."""
    opaque = frame.opaque
    if isinstance(opaque, tuple) and len(opaque) == 1 and isinstance(opaque[0], int):
        return opaque[0]
    return None


def default_workers() -> int:
    """Decoders to run in parallel on one video: the usable cores, at most 2 (measured best)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


def decode_frames(
    path: str | os.PathLike[str],
    index: VideoIndex,
    frames: Sequence[int],
    convert: Callable[[av.VideoFrame], T],
    *,
    workers: int | None = None,
) -> DecodeResult[T]:
    """Decode the frames with these presentation indices and convert each once.

    `workers` is the number of threads this video may use (default: usable cores, at most 2):
    that many decoders taking units (a keyframe and the packets up to its GOP's last target) from
    a shared queue, or one decoder with that many FFmpeg threads when all targets lie in one unit. Returns the converted frames by presentation index. Raises a
    `MediaError` when the file is damaged or any target cannot be produced.
    """
    path = os.fspath(path)
    units = plan_units(index, frames)
    workers = default_workers() if workers is None else max(1, workers)
    decoders = min(workers, len(units))
    queue = _UnitQueue(_unit_order(index, units, decoders))
    # Each decoder single-threaded; a lone decoder (one GOP to decode) uses FFmpeg's threads instead.
    threads = workers if decoders == 1 else 1
    jobs = [_Worker(path, index, convert, queue, threads) for _ in range(decoders)]
    if len(jobs) <= 1:
        results = [job.run() for job in jobs]
    else:
        with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="expvid-decode") as pool:
            results = list(pool.map(_Worker.run, jobs))
    merged: dict[int, T] = {}
    stats = DecodeStats(workers=len(jobs))
    gops: set[int] = set()
    for job, result in zip(jobs, results, strict=True):
        merged.update(result.frames)
        stats.add(result.stats)
        gops |= job.seen_gops
    stats.gops_decoded = len(gops)
    missing = sorted(set(frames) - set(merged))
    if missing:
        listed = ", ".join(f"{frame} (t={index.frame_time(frame):.3f} s)" for frame in missing[:5])
        raise CorruptMediaError(path, f"the decoder produced no picture for frames {listed}")
    return DecodeResult(merged, stats)


def describe_packet(index: VideoIndex, packet: int) -> str:
    """'frame 61 (t=2.033 s)', or for a packet decoded but never shown (pre-roll hidden by an edit
    list) 'hidden packet 12 (t=-1.300 s)': how error messages say where decoding was."""
    pts = int(index.packet_pts[packet])
    if pts == NO_TIMESTAMP:
        return f"hidden packet {packet} (no timestamp)"
    time = float(pts * index.time_base)
    if not index.packet_shown[packet]:
        return f"hidden packet {packet} (t={time:.3f} s)"
    return f"frame {_frame_of_packet(index, packet)} (t={time:.3f} s)"


def _frame_of_packet(index: VideoIndex, packet: int) -> int:
    """Presentation index of the frame coded by a packet (inverse of `index.frame_packet`)."""
    return int(index.packet_frame[packet])
