"""expvid's frames-to-tensors video path matches transformers' own image processors pixel for pixel.

A picture is a one-frame video to these models: Qwen2-VL's image processor repeats an image over
its temporal patch, so a video of that image twice must give the very same patches; InternVL and
LLaVA-OneVision resize and normalize a video frame exactly as a single, untiled image.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("transformers", reason="the video preprocessing builds on transformers")

from expvid.models.hf.checkpoint import read_checkpoint
from expvid.models.hf.loading import torchvision_available
from expvid.models.hf.video_fallback import FramesVideoProcessor, read_video_config


def picture(frames: list[bytes], index: int = 3) -> Image.Image:
    return Image.open(io.BytesIO(frames[index])).convert("RGB")


def test_qwen_video_of_one_picture_twice_equals_the_picture(tiny_checkpoints, frames):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    checkpoint = read_checkpoint(str(tiny_checkpoints["qwen2_vl"]))
    video = FramesVideoProcessor("qwen", read_video_config(checkpoint.path, checkpoint.family))
    image = Qwen2VLImageProcessorPil.from_pretrained(checkpoint.path)
    still = picture(frames)
    as_video = video([[still, still]], return_tensors="np")
    as_image = image([still], return_tensors="np")
    assert as_video["video_grid_thw"].tolist() == [[1, 4, 4]]
    assert as_image["image_grid_thw"].tolist() == [[1, 4, 4]]
    np.testing.assert_allclose(as_video["pixel_values_videos"], as_image["pixel_values"], atol=1e-5)


def test_qwen_patches_keep_frame_order_in_time(tiny_checkpoints, frames):
    checkpoint = read_checkpoint(str(tiny_checkpoints["qwen2_5_vl"]))
    video = FramesVideoProcessor("qwen", read_video_config(checkpoint.path, checkpoint.family))
    first, second = picture(frames, 0), picture(frames, 7)
    forward = video([[first, second]], return_tensors="np")["pixel_values_videos"]
    backward = video([[second, first]], return_tensors="np")["pixel_values_videos"]
    assert not np.allclose(forward, backward)
    # Within each patch the temporal axis comes right after the channel axis: (C, T, P, P).
    t = forward.reshape(len(forward), 3, 2, 14, 14)
    np.testing.assert_allclose(t[:, :, 0], backward.reshape(len(backward), 3, 2, 14, 14)[:, :, 1], atol=1e-6)


@pytest.mark.parametrize(
    ("model_type", "processor_path"),
    [
        ("internvl", "transformers.models.got_ocr2.image_processing_pil_got_ocr2.GotOcr2ImageProcessorPil"),
        (
            "llava_onevision",
            "transformers.models.llava_onevision.image_processing_pil_llava_onevision.LlavaOnevisionImageProcessorPil",
        ),
    ],
)
def test_stacked_frames_are_resized_and_normalized_like_an_untiled_image(
    tiny_checkpoints, frames, model_type, processor_path
):
    import importlib

    module, _, name = processor_path.rpartition(".")
    image_class = getattr(importlib.import_module(module), name)
    checkpoint = read_checkpoint(str(tiny_checkpoints[model_type]))
    video = FramesVideoProcessor("stacked", read_video_config(checkpoint.path, checkpoint.family))
    still = picture(frames)
    out = video([[still, picture(frames, 5), still]], return_tensors="np")["pixel_values_videos"]
    assert out.shape == (1, 3, 3, 28, 28)
    config = json.loads((checkpoint.path / "preprocessor_config.json").read_text())
    single = image_class(
        size=config["size"], image_mean=config["image_mean"], image_std=config["image_std"], do_pad=False
    )
    expected = single.resize(np.asarray(still).transpose(2, 0, 1), size=_size(config["size"]), resample=3)
    expected = single.normalize(single.rescale(expected, 1 / 255), config["image_mean"], config["image_std"])
    np.testing.assert_allclose(out[0, 0], expected, atol=1e-4)
    np.testing.assert_allclose(out[0, 0], out[0, 2], atol=0)


def _size(size: dict[str, int]):
    from transformers.image_utils import SizeDict

    return SizeDict(height=size["height"], width=size["width"])


def test_which_video_processor_ran_is_recorded(tiny_checkpoints):
    from expvid.models import create_backend

    backend = create_backend(f"hf:{tiny_checkpoints['internvl']}")
    expected = "transformers" if torchvision_available() else "expvid (torchvision not importable)"
    assert backend.describe()["video_processor"] == expected
