"""Frames-to-tensors for video inputs when transformers' own video processors cannot load.

transformers 5 implements every video processor on torchvision and refuses to build a VLM
processor at all without one. The harness has already sampled and decoded the frames, so what a
video processor still has to do is small and fully specified by the checkpoint's
`video_preprocessor_config.json` (or `preprocessor_config.json`): resize, rescale, normalize, and
lay the pixels out the way the model reads them. This module does exactly that with PIL and numpy,
reading the same config values, so a machine without torchvision can still run the models.

When torchvision is importable the backend uses the checkpoint's real video processor instead
(`describe()` records which one ran). The two differ only in resampling arithmetic (PIL bicubic vs
torchvision's antialiased bicubic), the same difference transformers itself accepts between its
PIL and torchvision image processors.

Layouts:
- "qwen": frames padded to a multiple of `temporal_patch_size` by repeating the last one, cut into
  (t, h, w) patches, flattened to (grid_t*grid_h*grid_w, C*t*p*p), plus `video_grid_thw`;
- "stacked" (InternVL, LLaVA-OneVision): each frame resized to the fixed model size,
  `pixel_values_videos` of shape (videos, frames, C, H, W).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from transformers.image_processing_base import BatchFeature
from transformers.video_processing_utils import VideoProcessorMixin
from transformers.video_utils import VideoMetadata

from expvid.models.hf.families import Family

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)

#: transformers' class defaults, used for keys a checkpoint's config leaves out.
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "qwen": {
        "size": {"shortest_edge": 128 * 28 * 28, "longest_edge": 28 * 28 * 768},
        "image_mean": CLIP_MEAN,
        "image_std": CLIP_STD,
        "patch_size": 14,
        "temporal_patch_size": 2,
        "merge_size": 2,
    },
    "internvl": {"size": {"height": 384, "width": 384}, "image_mean": CLIP_MEAN, "image_std": CLIP_STD},
    "llava-onevision": {
        "size": {"height": 384, "width": 384},
        "image_mean": CLIP_MEAN,
        "image_std": CLIP_STD,
    },
}


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen2-VL's resize rule: sides divisible by `factor`, pixel count within bounds, aspect kept."""
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def read_video_config(path: Path, family: Family) -> dict[str, Any]:
    """The checkpoint's video settings over transformers' class defaults.

    transformers reads `video_preprocessor_config.json` and falls back to `preprocessor_config.json`
    (older checkpoints such as Qwen2-VL-7B-Instruct have only the latter); so does this.
    """
    key = "qwen" if family.video_layout == "qwen" else family.name
    config = dict(CLASS_DEFAULTS[key])
    for name in ("video_preprocessor_config.json", "preprocessor_config.json"):
        file = path / name
        if file.is_file():
            loaded = json.loads(file.read_text(encoding="utf-8"))
            config.update({k: v for k, v in loaded.items() if v is not None})
            break
    size = dict(config["size"])
    if "min_pixels" in config:
        size["shortest_edge"] = config["min_pixels"]
    if "max_pixels" in config:
        size["longest_edge"] = config["max_pixels"]
    config["size"] = size
    return config


class FramesVideoProcessor(VideoProcessorMixin):
    """A video processor for frames that are already sampled: no decoding, no sampling."""

    model_input_names = ["pixel_values_videos", "video_grid_thw"]  # noqa: RUF012 (transformers declares it per instance)

    def __init__(self, layout: str, config: dict[str, Any]) -> None:
        super().__init__()
        self.layout = layout
        self.size = dict(config["size"])
        self.image_mean = np.asarray(config["image_mean"], dtype=np.float32)
        self.image_std = np.asarray(config["image_std"], dtype=np.float32)
        self.rescale_factor = float(config.get("rescale_factor", 1 / 255))
        self.patch_size = int(config.get("patch_size", 14))
        self.temporal_patch_size = int(config.get("temporal_patch_size", 2))
        self.merge_size = int(config.get("merge_size", 2))

    def __call__(self, videos: Any, **kwargs: Any) -> BatchFeature:  # type: ignore[override]
        """`videos`: one list of PIL images per video (what the backend passes)."""
        batch = [list(video) for video in videos]
        metadata = kwargs.get("video_metadata")
        data = self._qwen(batch) if self.layout == "qwen" else self._stacked(batch)
        if kwargs.get("return_metadata"):
            data["video_metadata"] = _metadata(batch, metadata)
        return BatchFeature(data=data, tensor_type=kwargs.get("return_tensors"))

    # -- layouts ------------------------------------------------------------------------------

    def _normalized(self, frame: Image.Image, height: int, width: int) -> np.ndarray:
        """(C, H, W) float32: resized with bicubic, rescaled to [0, 1], normalized."""
        rgb = frame.convert("RGB")
        if rgb.size != (width, height):
            rgb = rgb.resize((width, height), Image.Resampling.BICUBIC)
        array = np.asarray(rgb, dtype=np.float32) * self.rescale_factor
        array = (array - self.image_mean) / self.image_std
        return array.transpose(2, 0, 1)

    def _qwen(self, batch: list[list[Image.Image]]) -> dict[str, Any]:
        patches: list[np.ndarray] = []
        grids: list[list[int]] = []
        ps, tps, merge = self.patch_size, self.temporal_patch_size, self.merge_size
        for frames in batch:
            width, height = frames[0].size
            rh, rw = smart_resize(
                height,
                width,
                factor=ps * merge,
                min_pixels=int(self.size["shortest_edge"]),
                max_pixels=int(self.size["longest_edge"]),
            )
            video = np.stack([self._normalized(frame, rh, rw) for frame in frames])
            if pad := -len(frames) % tps:
                video = np.concatenate([video, np.repeat(video[-1:], pad, axis=0)])
            n_frames, channels = video.shape[0], video.shape[1]
            grid_t, grid_h, grid_w = n_frames // tps, rh // ps, rw // ps
            cut = video.reshape(grid_t, tps, channels, grid_h // merge, merge, ps, grid_w // merge, merge, ps)
            cut = cut.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
            patches.append(cut.reshape(grid_t * grid_h * grid_w, channels * tps * ps * ps))
            grids.append([grid_t, grid_h, grid_w])
        return {
            "pixel_values_videos": np.concatenate(patches, axis=0),
            "video_grid_thw": np.asarray(grids, dtype=np.int64),
        }

    def _stacked(self, batch: list[list[Image.Image]]) -> dict[str, Any]:
        lengths = {len(frames) for frames in batch}
        if len(lengths) > 1:
            raise ValueError(
                f"videos of one batch must have the same number of frames, got {sorted(lengths)}"
            )
        height, width = int(self.size["height"]), int(self.size["width"])
        videos = [np.stack([self._normalized(frame, height, width) for frame in frames]) for frames in batch]
        return {"pixel_values_videos": np.stack(videos)}


def accepting_fallback(processor_class: type[Any]) -> type[Any]:
    """`processor_class`, but accepting a `FramesVideoProcessor` as its video processor.

    Without torchvision, transformers cannot even name the video processor base class it checks
    processor parts against, so the stock processor refuses any video processor. This subclass
    lets exactly ours through and leaves every other check (and all processing) to transformers.
    """

    def check_argument_for_proper_class(self: Any, argument_name: str, argument: Any) -> Any:
        if argument_name == "video_processor" and isinstance(argument, FramesVideoProcessor):
            return FramesVideoProcessor
        return processor_class.check_argument_for_proper_class(self, argument_name, argument)

    return type(
        processor_class.__name__,
        (processor_class,),
        {"check_argument_for_proper_class": check_argument_for_proper_class, "__module__": __name__},
    )


def _metadata(batch: Sequence[Sequence[Image.Image]], given: Any) -> list[VideoMetadata]:
    if isinstance(given, list) and len(given) == len(batch):
        return [m if isinstance(m, VideoMetadata) else VideoMetadata(**m) for m in given]
    return [VideoMetadata(total_num_frames=len(frames), fps=None) for frames in batch]
