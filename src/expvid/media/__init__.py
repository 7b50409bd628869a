"""Video and transcript handling: frame-exact sampling, frame cache, clips, transcripts, sentences.

Knows nothing about suites. Importing this package is cheap; PyAV is imported by the submodules that
decode. The sampler's contract: the frame returned for a target time t is the last frame with
pts <= t (what a player shows), on constant and variable frame rate files and rotated files alike.
"""

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
