"""Which coded H.264 pictures nothing else refers to (and so need not be decoded unless wanted).

Why: in a typical x264 file with B-frames, a third to a half of all pictures are non-reference B
pictures (`nal_ref_idc == 0` in every slice NAL header). Decoding a frame far into a group of
pictures needs all the reference pictures before it, but none of those: skipping them halves the
decoding work without changing a single output pixel. The `is_disposable` packet flag says the
same thing for containers that store it.
"""

from __future__ import annotations

from collections.abc import Callable

import av

#: NAL unit types that carry a coded slice (non-IDR, partition A, IDR).
_SLICE_TYPES = frozenset({1, 2, 5})

NonReferenceTest = Callable[[av.Packet], bool]


def nal_length_size(extradata: bytes | None) -> int | None:
    """Length-prefix size of AVCC packets (MP4/MKV/MOV), from the avcC record; None for Annex B."""
    if not extradata or len(extradata) < 7 or extradata[0] != 1:
        return None
    return (extradata[4] & 0x03) + 1


def _avcc_non_reference(data: memoryview, length_size: int) -> bool:
    """True when the packet has slices and all of them have nal_ref_idc == 0."""
    offset, end, slices = 0, len(data), 0
    while offset + length_size < end:
        size = int.from_bytes(data[offset : offset + length_size], "big")
        offset += length_size
        if size <= 0 or offset + size > end:
            return False  # malformed: be safe, decode it
        header = data[offset]
        if header & 0x1F in _SLICE_TYPES:
            if header & 0x60:
                return False
            slices += 1
        offset += size
    return slices > 0


def _annexb_non_reference(data: memoryview) -> bool:
    """Same test for start-code delimited streams (MPEG-TS, raw .h264)."""
    raw = bytes(data)
    slices, start = 0, 0
    while True:
        start = raw.find(b"\x00\x00\x01", start)
        if start < 0 or start + 3 >= len(raw):
            return slices > 0
        header = raw[start + 3]
        if header & 0x1F in _SLICE_TYPES:
            if header & 0x60:
                return False
            slices += 1
        start += 3


def non_reference_test(codec_name: str, extradata: bytes | None) -> NonReferenceTest:
    """A function telling whether a packet of this stream is safe to skip when not wanted."""
    if codec_name != "h264":
        return lambda packet: bool(packet.is_disposable)
    length_size = nal_length_size(extradata)
    if length_size is None:
        return lambda packet: bool(packet.is_disposable) or _annexb_non_reference(memoryview(packet))

    def test(packet: av.Packet) -> bool:
        return bool(packet.is_disposable) or _avcc_non_reference(memoryview(packet), length_size)

    return test
