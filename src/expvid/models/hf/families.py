"""The model families the transformers backend runs, keyed by the `model_type` in a checkpoint's config.

Selection reads config.json, never the folder name: a fine-tune called "my-model" still runs as
Qwen2.5-VL if that is what its config says. Each family names the transformers classes that load
it and how it prefers to see the harness's frames:

- Qwen2-VL / Qwen2.5-VL take frames as one video (pairs of frames share a temporal patch; Qwen2.5-VL
  also encodes absolute time from the frame rate);
- InternVL (the transformers-native InternVL3 / 3.5 "-hf" checkpoints) takes frames as a video, which
  its processor renders as "Frame1: <img>...</img>" lines with one 448x448 tile per frame, exactly
  the model card's video recipe; images mode tiles each frame dynamically (up to 12 tiles plus a
  thumbnail, the model card's `dynamic_preprocess`);
- LLaVA-OneVision takes frames as a video (each frame pooled 2x2, as in its paper's video setting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

VideoLayout = Literal["qwen", "stacked"]


@dataclass(frozen=True)
class Family:
    name: str
    model_class: str
    processor_class: str
    #: How a video's pixels are laid out for the model (see `video_fallback`).
    video_layout: VideoLayout
    #: Whether the processor wants video metadata (frame rate) to place frames in time.
    wants_video_fps: bool = False
    #: Processors that stack the frames of every video in a batch into one tensor need the
    #: same number of frames in each request of a batch.
    same_frame_count_per_batch: bool = False


FAMILIES: dict[str, Family] = {
    "qwen2_vl": Family("qwen2-vl", "Qwen2VLForConditionalGeneration", "Qwen2VLProcessor", "qwen"),
    "qwen2_5_vl": Family(
        "qwen2.5-vl",
        "Qwen2_5_VLForConditionalGeneration",
        "Qwen2_5_VLProcessor",
        "qwen",
        wants_video_fps=True,
    ),
    "internvl": Family(
        "internvl",
        "InternVLForConditionalGeneration",
        "InternVLProcessor",
        "stacked",
        same_frame_count_per_batch=True,
    ),
    "llava_onevision": Family(
        "llava-onevision",
        "LlavaOnevisionForConditionalGeneration",
        "LlavaOnevisionProcessor",
        "stacked",
        same_frame_count_per_batch=True,
    ),
}

#: Checkpoints that need code from the hub (trust_remote_code): what to use instead.
REMOTE_CODE_ADVICE: dict[str, str] = {
    "internvl_chat": (
        "this is an InternVL checkpoint in its original remote-code format (InternVLChatModel). "
        "Use the transformers-native conversion published next to it (e.g. OpenGVLab/InternVL3-8B-hf, "
        "OpenGVLab/InternVL3_5-8B-HF), or serve this folder with vllm:PATH, which runs it natively"
    ),
}


def supported_model_types() -> str:
    return ", ".join(f"{key} ({family.name})" for key, family in FAMILIES.items())
