"""Resize and encode: output sizes, aspect ratio, rotation, lossless PNG, JPEG bytes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from expvid.media.sampler import sample_video, sample_video_arrays
from expvid.media.transform import (
    INTERPOLATION,
    _scaler,
    decode_image,
    encode_image,
    frame_to_rgb,
    output_size,
)


def test_output_size_rules() -> None:
    assert output_size(1280, 720, size=224, max_side=None) == (224, 224)
    assert output_size(1280, 720, size=224, max_side=448) == (448, 252)  # max_side wins
    assert output_size(720, 1280, size=None, max_side=448) == (252, 448)
    assert output_size(160, 96, size=None, max_side=448) == (160, 96)  # never upscales
    assert output_size(160, 96, size=None, max_side=None) == (160, 96)


def test_jpeg_frames_have_the_asked_size_and_readable_codes(videos, reference, frame_code) -> None:
    path = videos["cfr.mp4"]
    ref = reference(path)
    sampled = sample_video(path, num_frames=6, cache=False)
    for frame in sampled.frames:
        assert frame.mime == "image/jpeg" and frame.data[:3] == b"\xff\xd8\xff"
        image = decode_image(frame.data)
        assert image.shape == (224, 224, 3) == (frame.height, frame.width, 3)
        assert frame_code(image) == ref.at(frame.target).code


def test_aspect_kept_with_max_side_on_a_rotated_video(videos, reference, frame_code) -> None:
    path = videos["rot270.mp4"]  # stored 96x160, displayed 160x96
    sampled = sample_video(path, num_frames=3, max_side=80, image_format="png", cache=False)
    for frame in sampled.frames:
        image = decode_image(frame.data)
        assert (frame.width, frame.height) == (80, 48) and image.shape == (48, 80, 3)
        assert frame_code(image) == reference(path).at(frame.target).code


def test_png_is_lossless(videos) -> None:
    path = videos["long_gop.mp4"]
    png = sample_video(path, num_frames=4, size=None, image_format="png", cache=False)
    arrays = sample_video_arrays(path, num_frames=4, size=None, cache=False)
    for encoded, array in zip(png.frames, arrays.frames, strict=True):
        assert encoded.mime == "image/png"
        assert np.array_equal(decode_image(encoded.data), array.image)


def test_jpeg_quality_trades_size(videos) -> None:
    path = videos["cfr.mp4"]
    low = sample_video(path, num_frames=3, quality=30, cache=False)
    high = sample_video(path, num_frames=3, quality=95, cache=False)
    assert sum(len(f.data) for f in low.frames) < sum(len(f.data) for f in high.frames)


def test_encode_rejects_unknown_formats() -> None:
    with pytest.raises(ValueError, match="image_format"):
        encode_image(np.zeros((4, 4, 3), dtype=np.uint8), "gif")


def test_sampler_settings_drive_the_same_sampling(videos) -> None:
    from pydantic import ValidationError

    from expvid.media.sampler import sample_with_settings
    from expvid.schema import SamplerSettings

    path = videos["cfr.mp4"]
    uniform = sample_with_settings(path, SamplerSettings(num_frames=4, size=112), cache=False)
    direct = sample_video(path, num_frames=4, size=112, cache=False)
    assert [f.data for f in uniform.frames] == [f.data for f in direct.frames]
    settings = SamplerSettings(strategy="fps_keep_last", fps=1.0, max_frames=3, image_format="png")
    thinned = sample_with_settings(path, settings, end=9.0, cache=False)
    assert [f.target for f in thinned.frames] == [2.0, 5.0, 8.0] and thinned.frames[0].mime == "image/png"
    assert [ref.index for ref in thinned.frame_refs()] == [60, 150, 240]
    # An unknown strategy is refused when the settings are built, naming the valid ones.
    with pytest.raises(ValidationError, match="uniform"):
        SamplerSettings(strategy="random", num_frames=4)  # type: ignore[arg-type]


def test_the_kept_scaler_gives_what_a_fresh_one_gives_across_sizes_and_videos(videos) -> None:
    """One scaler per thread serves every frame: frames of different sizes, to different output
    sizes, in any order, come out exactly as from a scaler set up for each frame alone."""
    import av

    def first_frames(path, count: int) -> list[av.VideoFrame]:
        with av.open(str(path)) as container:
            return [frame for _, frame in zip(range(count), container.decode(video=0), strict=False)]

    small = first_frames(videos["cfr.mp4"], 3)  # 160x96
    rotated = first_frames(videos["rot90.mp4"], 3)  # stored 96x160
    mixed = [(small[0], 224, 224), (rotated[0], 50, 80), (small[1], 64, 40), (rotated[1], 224, 224)]
    mixed += [(small[2], 224, 224), (rotated[2], 224, 224)]
    for frame, width, height in mixed:
        fresh = frame.reformat(
            width=height if frame.rotation % 180 else width,
            height=width if frame.rotation % 180 else height,
            format="rgb24",
            interpolation=INTERPOLATION,
            threads=1,
        ).to_ndarray()
        expected = np.rot90(fresh, k=(frame.rotation % 360) // 90) if frame.rotation else fresh
        assert np.array_equal(frame_to_rgb(frame, width, height), expected)


def test_each_thread_has_its_own_scaler() -> None:
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.extend([_scaler(), _scaler()]))
    worker.start()
    worker.join()
    assert found[0] is found[1]  # kept within a thread
    assert _scaler() is _scaler() and _scaler() is not found[0]  # never shared between threads
