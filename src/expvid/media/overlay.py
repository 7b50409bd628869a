"""Burn text onto chosen stretches of a video: a verifier's overlay.

Where a transcript names a critical detail (a mass, a temperature) that the video does not show, a
build recipe's expert verifier overlays it onto the relevant frames. `burn_text` decodes every frame with PyAV, draws each overlay's text in a boxed banner on
the frames whose time lies in its [start, end), and re-encodes (H.264, every frame keeps its own
time). The first audio track is kept: its packets are copied untouched (same codec, same
timestamps, so it stays continuous and in sync with the pictures) when MP4 carries the codec
(`COPIED_AUDIO`), else it is decoded and re-encoded to AAC with the decoder's timestamps. The
released video is the experiment video a human or a model with audio watches; an overlay must not
silence its narration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
from PIL import Image, ImageDraw, ImageFont

from expvid.media.errors import CorruptMediaError

#: Audio codecs the MP4 muxer carries as they are (anything else is re-encoded to AAC).
COPIED_AUDIO = ("aac", "mp3", "alac", "ac3", "eac3", "opus", "flac")


@dataclass(frozen=True)
class Overlay:
    text: str
    start: float
    end: float
    position: str = "bottom"  # or "top"


def _font(height: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    size = max(10, height // 14)
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def draw_overlays(image: Image.Image, overlays: Sequence[Overlay]) -> Image.Image:
    draw = ImageDraw.Draw(image)
    font = _font(image.height)
    for index, overlay in enumerate(overlays):
        left, top, right, bottom = draw.textbbox((0, 0), overlay.text, font=font)
        width, height = right - left, bottom - top
        pad = max(2, height // 3)
        y = (
            pad + index * (height + 3 * pad)
            if overlay.position == "top"
            else image.height - (index + 1) * (height + 3 * pad)
        )
        x = max(0, (image.width - width) // 2 - pad)
        draw.rectangle((x, y, x + width + 2 * pad, y + height + 2 * pad), fill=(0, 0, 0))
        draw.text((x + pad - left, y + pad - top), overlay.text, fill=(255, 255, 255), font=font)
    return image


def burn_text(
    source: Path, target: Path, overlays: Sequence[Overlay], *, crf: int = 20, preset: str = "veryfast"
) -> int:
    """Write `target`: `source` with `overlays` drawn on and its audio kept; returns how many frames
    got text."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial{target.suffix}")
    drawn = 0
    try:
        with av.open(str(source)) as reader, av.open(str(partial), "w") as writer:
            stream = reader.streams.video[0]
            rate = stream.average_rate or Fraction(30)
            out = writer.add_stream("libx264", rate=rate)
            assert isinstance(out, av.VideoStream)
            out.width, out.height = stream.codec_context.width, stream.codec_context.height
            out.pix_fmt = "yuv420p"
            out.time_base = stream.time_base
            out.options = {"crf": str(crf), "preset": preset}
            audio = _AudioTrack(reader, writer)
            for packet in reader.demux([stream, *audio.streams]):
                if packet.stream.type == "audio":
                    audio.mux(packet)
                    continue
                for frame in packet.decode():
                    if not isinstance(frame, av.VideoFrame) or frame.pts is None or stream.time_base is None:
                        continue
                    seconds = float(frame.pts * stream.time_base)
                    active = [o for o in overlays if o.start <= seconds < o.end]
                    if active:
                        image = draw_overlays(frame.to_image(), active)
                        new = av.VideoFrame.from_image(image).reformat(format="yuv420p")
                        drawn += 1
                    else:
                        new = frame.reformat(format="yuv420p")
                    new.pts, new.time_base = frame.pts, stream.time_base
                    for encoded in out.encode(new):
                        writer.mux(encoded)
            for encoded in out.encode(None):
                writer.mux(encoded)
            audio.flush()
    except av.error.FFmpegError as error:
        partial.unlink(missing_ok=True)
        raise CorruptMediaError(source, f"cannot burn the overlay ({error})") from None
    partial.replace(target)
    return drawn


class _AudioTrack:
    """The source's first audio stream in the output: copied, or re-encoded to AAC (see the module)."""

    def __init__(self, reader: av.container.InputContainer, writer: av.container.OutputContainer) -> None:
        self.writer = writer
        self.source = reader.streams.audio[0] if reader.streams.audio else None
        self.streams = [self.source] if self.source is not None else []
        self.copy = self.source is not None and self.source.codec_context.name in COPIED_AUDIO
        self.out: av.AudioStream | None = None
        if self.source is None:
            return
        if self.copy:
            self.out = writer.add_stream_from_template(self.source)
            return
        context = self.source.codec_context
        encoded = writer.add_stream("aac", rate=context.sample_rate or 48_000)
        assert isinstance(encoded, av.AudioStream)
        # By channel count: a PCM track often has no named layout ("1 channels"), which AAC refuses.
        encoded.layout = "mono" if context.layout.nb_channels == 1 else "stereo"
        self.out = encoded

    def mux(self, packet: av.Packet) -> None:
        assert self.out is not None
        if self.copy:
            if packet.dts is None:  # the demuxer's end-of-stream marker
                return
            packet.stream = self.out
            self.writer.mux(packet)
            return
        for frame in packet.decode():
            if isinstance(frame, av.AudioFrame):
                for encoded in self.out.encode(frame):
                    self.writer.mux(encoded)

    def flush(self) -> None:
        if self.out is not None and not self.copy:
            for encoded in self.out.encode(None):
                self.writer.mux(encoded)
