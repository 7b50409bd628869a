"""The data model shared by every stage (pydantic v2). Imports nothing else from `expvid`.

`dataset` (what every suite loader returns, every record accounted for) is imported from its module.
"""

from expvid.schema.items import (
    BLANK_PATTERN,
    OPTION_LETTERS,
    AnswerType,
    AnswerValue,
    Box,
    ImagesRef,
    Item,
    MediaRef,
    VideoRef,
    count_blanks,
)
from expvid.schema.jsonl import DataError, RecordProblem, describe_validation_error, read_jsonl
from expvid.schema.manifest import (
    FRAMES_CONTROLS,
    FramesControl,
    JudgeSettings,
    RunManifest,
    SamplerSettings,
    frames_control_of,
)
from expvid.schema.records import (
    ErrorKind,
    ExtractionStatus,
    FrameRef,
    ItemScore,
    Judgment,
    Prediction,
    TaskScore,
    Usage,
)

__all__ = [
    "BLANK_PATTERN",
    "FRAMES_CONTROLS",
    "OPTION_LETTERS",
    "AnswerType",
    "AnswerValue",
    "Box",
    "DataError",
    "ErrorKind",
    "ExtractionStatus",
    "FrameRef",
    "FramesControl",
    "ImagesRef",
    "Item",
    "ItemScore",
    "JudgeSettings",
    "Judgment",
    "MediaRef",
    "Prediction",
    "RecordProblem",
    "RunManifest",
    "SamplerSettings",
    "TaskScore",
    "Usage",
    "VideoRef",
    "count_blanks",
    "describe_validation_error",
    "frames_control_of",
    "read_jsonl",
]
