"""Video and transcript handling: frame-exact sampling, frame cache, clips, transcripts, sentences.

Knows nothing about suites. Importing this package is cheap: the names below are imported from
their modules on first use (PEP 562), so `expvid frames --help` or a caller that only needs the
error types does not load PyAV, numpy, pysbd or the schema. The sampler's contract: the frame
returned for a target time t is the last frame with pts <= t (what a player shows), on constant
and variable frame rate files, files cut without re-encoding and rotated files alike.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from expvid.media.cache import FrameCache, default_cache_dir
    from expvid.media.decode import DecodeStats
    from expvid.media.errors import (
        CorruptMediaError,
        EmptyMediaError,
        MediaError,
        MediaNotFoundError,
        NotAVideoError,
        SamplingError,
        TruncatedMediaError,
        WindowError,
    )
    from expvid.media.info import VideoInfo
    from expvid.media.plan import FramePlan
    from expvid.media.sampler import (
        FrameArray,
        SampledArrays,
        SampledFrame,
        SampledVideo,
        probe,
        sample_video,
        sample_video_arrays,
        sample_with_settings,
    )
    from expvid.media.sentences import Sentence, segment_sentences
    from expvid.media.transcripts import (
        Cue,
        Transcript,
        TranscriptError,
        Word,
        read_transcript,
        write_srt,
        write_transcript,
        write_vtt,
    )

_EXPORTS = {
    "CorruptMediaError": "expvid.media.errors",
    "Cue": "expvid.media.transcripts",
    "DecodeStats": "expvid.media.decode",
    "EmptyMediaError": "expvid.media.errors",
    "FrameArray": "expvid.media.sampler",
    "FrameCache": "expvid.media.cache",
    "FramePlan": "expvid.media.plan",
    "MediaError": "expvid.media.errors",
    "MediaNotFoundError": "expvid.media.errors",
    "NotAVideoError": "expvid.media.errors",
    "SampledArrays": "expvid.media.sampler",
    "SampledFrame": "expvid.media.sampler",
    "SampledVideo": "expvid.media.sampler",
    "SamplingError": "expvid.media.errors",
    "Sentence": "expvid.media.sentences",
    "Transcript": "expvid.media.transcripts",
    "TranscriptError": "expvid.media.transcripts",
    "TruncatedMediaError": "expvid.media.errors",
    "VideoInfo": "expvid.media.info",
    "WindowError": "expvid.media.errors",
    "Word": "expvid.media.transcripts",
    "default_cache_dir": "expvid.media.cache",
    "probe": "expvid.media.sampler",
    "read_transcript": "expvid.media.transcripts",
    "sample_video": "expvid.media.sampler",
    "sample_video_arrays": "expvid.media.sampler",
    "sample_with_settings": "expvid.media.sampler",
    "segment_sentences": "expvid.media.sentences",
    "write_srt": "expvid.media.transcripts",
    "write_transcript": "expvid.media.transcripts",
    "write_vtt": "expvid.media.transcripts",
}

__all__ = [
    "CorruptMediaError",
    "Cue",
    "DecodeStats",
    "EmptyMediaError",
    "FrameArray",
    "FrameCache",
    "FramePlan",
    "MediaError",
    "MediaNotFoundError",
    "NotAVideoError",
    "SampledArrays",
    "SampledFrame",
    "SampledVideo",
    "SamplingError",
    "Sentence",
    "Transcript",
    "TranscriptError",
    "TruncatedMediaError",
    "VideoInfo",
    "WindowError",
    "Word",
    "default_cache_dir",
    "probe",
    "read_transcript",
    "sample_video",
    "sample_video_arrays",
    "sample_with_settings",
    "segment_sentences",
    "write_srt",
    "write_transcript",
    "write_vtt",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
