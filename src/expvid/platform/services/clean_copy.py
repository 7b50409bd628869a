"""Copy a video for a public release without anything but its pictures (and sound).

Why not a file copy: containers carry text a benchmark must not publish. ffmpeg copies an input's
`title` and `comment` tags to its outputs, editors write the source file name into them, MKV files
attach files by name, and a stream's `handler_name` can hold anything: a clip named
`clip_3_removed_step_3.mp4` by the build tool may say so inside itself. Here the packets of the video
and audio streams are copied (no re-encoding: the pictures are bit-identical) into a new container
with no container or stream metadata, no chapters, no attachments and no data or subtitle streams,
written with `bitexact` so not even the muxer's version is recorded. The display rotation is part
of the stream's parameters and is kept.

Re-timed (`retime_plan`): the packets keep their bytes but get new timestamps, continuous from 0.
A clip from which a step was removed by stream copy keeps the original timestamps around the cut
(frames at 1.9 s, then 4.0 s): the hole shows where the missing step was, and a start at 37.2 s
shows where in the source the clip lies. Every gap longer than a few frames (`hole_after`) is
closed to one frame's duration, the first picture is shown at 0 (other streams keep their offset
to it); ordinary
variations of a variable-frame-rate recording are kept as they are.

The output is named after its own content (SHA-256), so the name says nothing about the source.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import statistics
import uuid
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

#: Streams worth publishing; everything else (data, subtitles, attachments) is dropped.
_KEPT = ("video", "audio")


class CleanCopyError(RuntimeError):
    pass


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


@dataclass(frozen=True)
class _Stamp:
    pts: int
    dts: int
    duration: int


def hole_after(typical: int, time_base: Fraction) -> int:
    """A gap between consecutive frames (or audio packets) longer than this is a hole: four typical
    durations, and at least a quarter of a second (so that a variable-frame-rate phone recording,
    whose frame times wander, is left as it was)."""
    return max(4 * typical, int(Fraction(1, 4) / time_base))


def _stream_plan(stamps: list[tuple[int, int, int]], time_base: Fraction, offset: int) -> list[_Stamp]:
    """New (pts, dts, duration) for one stream's packets, in demux order: presentation times made
    continuous from `offset`, decode times re-derived so they increase and never pass the pts."""
    if not stamps:
        return []
    shown = sorted({pts for pts, _, _ in stamps})
    steps = [b - a for a, b in itertools.pairwise(shown) if b > a]
    durations = [d for _, _, d in stamps if d > 0]
    typical = (
        int(statistics.median(steps)) if steps else (int(statistics.median(durations)) if durations else 1)
    )
    typical = max(typical, 1)
    limit = hole_after(typical, time_base)
    new: dict[int, int] = {shown[0]: offset}
    for previous, current in itertools.pairwise(shown):
        gap = current - previous
        new[current] = new[previous] + (typical if gap > limit else gap)
    pts = [new[p] for p, _, _ in stamps]
    ordered = sorted(pts)
    delay = max(0, *(o - p for o, p in zip(ordered, pts, strict=True)))
    plan = []
    for index, (p, (_, _, duration)) in enumerate(zip(pts, stamps, strict=True)):
        # As encoders write it: the first frame shown at the offset, decode times `delay` earlier.
        plan.append(_Stamp(pts=p, dts=ordered[index] - delay, duration=duration if duration > 0 else typical))
    return plan


def retime_plan(source: Path) -> dict[int, list[_Stamp]]:
    """Stream index -> the new timestamps of its packets in demux order (first pass, no decoding)."""
    found: dict[int, list[tuple[int, int, int]]] = {}
    bases: dict[int, Fraction] = {}
    with av.open(str(source)) as src:
        streams = [s for s in src.streams if s.type in _KEPT]
        video = [s.index for s in streams if s.type == "video"]
        for stream in streams:
            found[stream.index], bases[stream.index] = [], Fraction(stream.time_base or Fraction(1, 90000))
        for packet in src.demux(streams):
            pts = packet.pts if packet.pts is not None else packet.dts
            if pts is None:
                continue
            dts = packet.dts if packet.dts is not None else pts
            found[packet.stream.index].append((pts, dts, packet.duration or 0))
    starts = {i: min(p for p, _, _ in v) * bases[i] for i, v in found.items() if v}
    # The first picture is shown at 0; other streams keep their offset to it (an AAC encoder's
    # priming samples start slightly before, which the container's edit list hides).
    shown_first = [i for i in video if i in starts]
    first = starts[shown_first[0]] if shown_first else min(starts.values(), default=Fraction(0))
    return {
        index: _stream_plan(
            stamps, bases[index], int((starts[index] - first) / bases[index]) if stamps else 0
        )
        for index, stamps in found.items()
    }


def remux_without_metadata(source: Path, target: Path) -> None:
    """Copy the video and audio packets of `source` into `target` (same container format), re-timed."""
    try:
        plan = retime_plan(source)
        with av.open(str(source)) as src:
            streams = [s for s in src.streams if s.type in _KEPT]
            if not any(s.type == "video" for s in streams):
                raise CleanCopyError(f"{source}: no video stream")
            # The format follows the target's suffix (the same as the source's), as ffmpeg would choose.
            with av.open(str(target), "w", options={"fflags": "+bitexact"}) as dst:
                mapping = {}
                for stream in streams:
                    out = dst.add_stream_from_template(stream)
                    mapping[stream.index] = out
                position = dict.fromkeys(mapping, 0)
                for packet in src.demux(streams):
                    if packet.dts is None and packet.pts is None:
                        continue  # the demuxer's end-of-stream marker
                    index = packet.stream.index
                    stamp = plan[index][position[index]]
                    position[index] += 1
                    packet.pts, packet.dts, packet.duration = stamp.pts, stamp.dts, stamp.duration
                    packet.stream = mapping[index]
                    dst.mux(packet)
    except av.FFmpegError as error:
        target.unlink(missing_ok=True)
        raise CleanCopyError(f"{source}: cannot copy the video ({error})") from None
    except BaseException:
        target.unlink(missing_ok=True)
        raise


def clean_copy(source: Path, folder: Path, *, prefix: str = "clip_") -> Path:
    """Write a metadata-free copy of `source` into `folder` as `<prefix><sha256[:16]><suffix>`.

    Returns the path of the copy; an identical copy already there is reused.
    """
    folder.mkdir(parents=True, exist_ok=True)
    suffix = source.suffix.lower() or ".mp4"
    scratch = folder / f".partial-{uuid.uuid4().hex}{suffix}"
    remux_without_metadata(source, scratch)
    final = folder / f"{prefix}{_digest(scratch)[:16]}{suffix}"
    if final.exists():
        scratch.unlink()
    else:
        os.replace(scratch, final)
    return final
