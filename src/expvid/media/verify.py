"""Decoding a whole video once, to find damage that reading its packets cannot see.

`expvid data check` reads every packet by default (the sampler's index): that finds a missing file,
a file cut short, a container that lies about its length. It cannot find bytes overwritten in the
middle of the stream (a bad disk sector, a corrupted transfer that kept the size): the packets are
all there, only their contents are wrong, and the decoder fails on them during `expvid eval`, on
whichever item happens to need that part. `decode_problem` decodes every packet, as a player
playing the file through would, and reports the first failure, every shown frame the decoder did
not produce, and pictures the decoder flags as damaged (error concealment), each with its frame
and time.
"""

from __future__ import annotations

import os

import av

from expvid.media.container import open_video
from expvid.media.decode import describe_packet, tagged_position
from expvid.media.errors import MediaError
from expvid.media.index import load_index


def decode_problem(path: str | os.PathLike[str], *, threads: int = 1) -> str | None:
    """Why the video at `path` does not decode from start to end, or None when every frame does."""
    try:
        index = load_index(path)
    except MediaError as error:
        return error.problem
    produced: set[int] = set()
    produced_pts: set[int] = set()
    damaged: list[int] = []
    position = -1
    try:
        with open_video(os.fspath(path)) as (container, stream):
            context = stream.codec_context
            context.thread_type = "AUTO" if threads > 1 else "SLICE"
            context.thread_count = threads
            context.copy_opaque = True
            for packet in container.demux(stream):
                if packet.size == 0:
                    break
                position += 1
                packet.opaque = (position,)  # an object of its own: see `decode._tag`
                for frame in context.decode(packet):
                    _take(frame, produced, produced_pts, damaged)
            for frame in context.decode(None):
                _take(frame, produced, produced_pts, damaged)
    except av.FFmpegError as error:
        where = describe_packet(index, min(max(position, 0), index.num_packets - 1))
        return f"decoding {where} failed: {getattr(error, 'strerror', None) or error}"
    except MediaError as error:
        return error.problem
    shown = [int(packet) for packet in index.frame_packet]
    if produced:
        missing = [packet for packet in shown if packet not in produced]
    else:  # a decoder that does not pass `opaque` on: compare by timestamp
        missing = [packet for packet in shown if int(index.packet_pts[packet]) not in produced_pts]
    if missing:
        return (
            f"the decoder produced no picture for {len(missing)} of {len(shown)} frame(s), first "
            f"{describe_packet(index, missing[0])}"
        )
    visible = sorted(packet for packet in damaged if index.packet_shown[packet])
    if visible:
        return (
            f"{len(visible)} frame(s) decoded with errors concealed (damaged data), first "
            f"{describe_packet(index, visible[0])}"
        )
    return None


def _take(frame: av.VideoFrame, produced: set[int], produced_pts: set[int], damaged: list[int]) -> None:
    if frame.pts is not None:
        produced_pts.add(int(frame.pts))
    packet = tagged_position(frame)
    if packet is not None:
        produced.add(packet)
        if frame.is_corrupt:
            damaged.append(packet)
