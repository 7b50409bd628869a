"""Files made by the ffmpeg command sample exactly the frames ffmpeg itself presents.

The files (tests/media/ffmpeg_cli.py) are what researchers actually feed an evaluation: clips cut
without re-encoding (a GOP of hidden pre-roll behind an MP4 edit list, or shown in MKV), an
open-GOP encode and a cut of it, a start delayed by an edit list, a phone-like variable frame rate
remuxed to MKV/MOV and re-encoded to VP9/WebM, a rotated phone clip cut, a rotation added by
ffmpeg. The reference is ffmpeg's own decode (`-copyts -fps_mode passthrough`, rotation applied):
every frame's position, pts, drawn frame number and pixels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from expvid.media.index import NO_TIMESTAMP, load_index
from expvid.media.plan import uniform_times
from expvid.media.sampler import SampledArrays, probe, sample_video_arrays

CLI_VIDEOS = [
    "cut_copy.mp4",
    "cut_copy.mov",
    "cut_copy.mkv",
    "cut_output_seek.mp4",
    "open_gop.mp4",
    "open_gop_cut.mp4",
    "open_gop_cut.mkv",
    "edit_list_delay.mp4",
    "vfr.mp4",
    "vfr.mkv",
    "vfr.mov",
    "vfr_vp9.webm",
    "vfr_vp9.mp4",
    "rot90_cut.mp4",
    "rot90_tagged.mp4",
]


def assert_same_as_ffmpeg(sampled: SampledArrays, ref, frame_code: Callable[[np.ndarray], int]) -> None:
    for frame in sampled.frames:
        expected = ref.at(frame.target)
        assert frame.index == expected.index, f"target {frame.target}: got frame {frame.index}"
        assert frame.time == pytest.approx(expected.time, abs=1e-9)
        assert frame_code(frame.image) == expected.code
        assert frame.image.shape == expected.rgb.shape
        diff = np.abs(frame.image.astype(np.int16) - expected.rgb.astype(np.int16))
        assert diff.max() <= 3, f"frame {frame.index} differs from ffmpeg's by {diff.max()}"


@pytest.mark.parametrize("name", CLI_VIDEOS)
def test_index_lists_exactly_the_frames_ffmpeg_presents(name: str, cli_videos, ffmpeg_reference) -> None:
    path = cli_videos[name]
    ref = ffmpeg_reference(path)
    index = load_index(path)
    assert index.info.num_frames == len(ref.frames)
    assert index.frame_times.tolist() == pytest.approx([frame.time for frame in ref.frames], abs=1e-9)
    assert (index.info.height, index.info.width) == ref.frames[0].rgb.shape[:2]  # as displayed


def test_stream_copy_cuts_start_with_a_gop_of_hidden_pre_roll(cli_videos, ffmpeg_reference) -> None:
    """The condition is real: 75 packets decode to nothing before the first picture (MP4/MOV)."""
    for name in ("cut_copy.mp4", "cut_copy.mov"):
        index = load_index(cli_videos[name])
        hidden = np.flatnonzero(~index.packet_shown)
        assert len(hidden) >= 75 and hidden[0] == 0, name
        assert ffmpeg_reference(cli_videos[name]).frames[0].code == 165  # -ss 5.5 at 30 fps
    # Matroska has no edit lists: the same cut shows the pre-roll, from the keyframe at 3 s.
    mkv = ffmpeg_reference(cli_videos["cut_copy.mkv"])
    assert (
        mkv.frames[0].code == 90
        and len(mkv.frames) == len(ffmpeg_reference(cli_videos["cut_copy.mp4"]).frames) + 75
    )


@pytest.mark.parametrize("name", CLI_VIDEOS)
@pytest.mark.parametrize("num_frames", [1, 7, 32])
def test_uniform_sampling_matches_ffmpeg(
    name: str, num_frames: int, cli_videos, ffmpeg_reference, frame_code
) -> None:
    path = cli_videos[name]
    sampled = sample_video_arrays(path, num_frames=num_frames, size=None, cache=False)
    assert [frame.target for frame in sampled.frames] == pytest.approx(
        uniform_times(sampled.info.start, sampled.info.end, num_frames)
    )
    assert_same_as_ffmpeg(sampled, ffmpeg_reference(path), frame_code)


@pytest.mark.parametrize(
    "name", ["cut_copy.mp4", "cut_copy.mkv", "open_gop_cut.mp4", "vfr.mkv", "rot90_cut.mp4"]
)
def test_random_times_match_ffmpeg(name: str, cli_videos, ffmpeg_reference, frame_code) -> None:
    path = cli_videos[name]
    info = probe(path)
    rng = np.random.default_rng(len(name))
    times = sorted(rng.uniform(info.start, info.end - 1e-6, size=37).tolist())
    sampled = sample_video_arrays(path, times=times, size=None, cache=False, workers=2)
    assert_same_as_ffmpeg(sampled, ffmpeg_reference(path), frame_code)


def test_the_first_and_last_frames_of_a_cut(cli_videos, ffmpeg_reference, frame_code) -> None:
    """The frames right after the hidden pre-roll and at the ragged end a `-t` cut leaves."""
    path = cli_videos["cut_copy.mp4"]
    ref = ffmpeg_reference(path)
    times = [ref.frames[0].time, ref.frames[1].time, ref.frames[-2].time, ref.frames[-1].time]
    sampled = sample_video_arrays(path, times=times, size=None, cache=False)
    assert [frame.index for frame in sampled.frames] == [0, 1, len(ref.frames) - 2, len(ref.frames) - 1]
    assert_same_as_ffmpeg(sampled, ref, frame_code)


@pytest.mark.parametrize("name", ["open_gop.mp4", "open_gop_cut.mkv"])
def test_reading_on_into_an_open_gop_never_decodes_from_skipped_references(
    name: str, cli_videos, ffmpeg_reference, frame_code
) -> None:
    """One decoder reads on from one GOP into the next without seeking, skipping the rest of the
    first. An open-GOP keyframe's leading pictures refer to those skipped pictures: unless the
    decoder is reset there (as after a seek), it decodes them, and pictures after them, from the
    wrong references. Before that reset, 14 frames (MP4) and 7 frames (MKV) returned garbage."""
    path = cli_videos[name]
    ref = ffmpeg_reference(path)
    for num_frames in range(2, 17):
        sampled = sample_video_arrays(path, num_frames=num_frames, size=None, cache=False, workers=1)
        assert_same_as_ffmpeg(sampled, ref, frame_code)


def test_packets_without_timestamps_are_decoded_but_never_frames(cli_videos, ffmpeg_reference) -> None:
    path = cli_videos["open_gop_cut.mkv"]
    index = load_index(path)
    untimed = np.flatnonzero(index.packet_pts == NO_TIMESTAMP)
    if len(untimed) == 0:
        pytest.skip("this ffmpeg writes the leading pictures with timestamps")
    assert not index.packet_shown[untimed].any()
    assert index.info.num_frames == index.num_packets - len(untimed) == len(ffmpeg_reference(path).frames)
