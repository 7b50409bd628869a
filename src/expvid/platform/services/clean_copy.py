"""Copy a video for a public release without anything but its pictures (and sound).

Why not a file copy: containers carry text a benchmark must not publish. ffmpeg copies an input's
`title` and `comment` tags to its outputs, editors write the source file name into them, MKV files
attach files by name, and a stream's `handler_name` can hold anything: a clip named
`clip_3_removed_step_3.mp4` by the build tool may say so inside itself. Here the packets of the video
and audio streams are copied (no re-encoding: the pictures are bit-identical) into a new container
with no container or stream metadata, no chapters, no attachments and no data or subtitle streams,
written with `bitexact` so not even the muxer's version is recorded. The display rotation is part
of the stream's parameters and is kept.

The output is named after its own content (SHA-256), so the name says nothing about the source.
"""

from __future__ import annotations

import hashlib
import os
import uuid
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


def remux_without_metadata(source: Path, target: Path) -> None:
    """Copy the video and audio packets of `source` into `target` (same container format)."""
    try:
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
                for packet in src.demux(streams):
                    if packet.dts is None and packet.pts is None:
                        continue  # the demuxer's end-of-stream marker
                    packet.stream = mapping[packet.stream.index]
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
