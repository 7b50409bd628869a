"""Where the sample generator puts things, and the video settings it renders with.

Paths follow the real ExpVid release exactly (formats.md), including the completeness-verification
clip name that leaks the answer (`clip_<n>_removed_step_<k>.mp4`): the evaluator must cope with
it by never showing paths to a model, so the sample must contain it.
"""

from __future__ import annotations

#: Small frames and a low rate keep generation to a few seconds on 2 cores.
WIDTH = 256
HEIGHT = 144
FPS = 10
#: Keyframe interval of the raw source videos (2 s), as a seekable camera file would have.
SOURCE_GOP = 20
#: Length of the concluding slide at the end of each source video.
SLIDE_SECONDS = 8.0
#: x264 speed preset; "ultrafast" keeps encoding well under the runtime budget.
PRESET = "ultrafast"

TRUTH_FILE = "sample_truth.json"
GENERATOR = "expvid.suites.sample"
TRUTH_FORMAT = 1


def level1_clip(video_id: str, step: int) -> str:
    return f"videos/level_1/{video_id}/clip_{step}.mp4"


def segment_clip(video_id: str, stage: int) -> str:
    return f"videos/level_2/video_segments/{video_id}/clip_{stage}.mp4"


def prediction_clip(video_id: str, stage: int) -> str:
    return f"videos/level_2/step_prediction/{video_id}/clip_{stage}_prediction.mp4"


def verification_clip(video_id: str, stage: int, removed_local_step: int) -> str:
    return f"videos/level_2/video_verification/{video_id}/clip_{stage}_removed_step_{removed_local_step}.mp4"


def level3_video(video_id: str) -> str:
    return f"videos/level_3/{video_id}_.mp4"


def source_dir(video_id: str) -> str:
    return f"sources/{video_id}"


def source_video(video_id: str) -> str:
    return f"{source_dir(video_id)}/video.mp4"
