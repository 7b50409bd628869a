"""Decoding does the least work: one seek per GOP with targets at most, no frame decoded twice,
only the reference pictures up to each target decoded, far fewer frames than the file has."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from expvid.media.decode import _unit_cost, _unit_order, decode_frames, plan_units, tagged_position
from expvid.media.index import load_index
from expvid.media.sampler import sample_video_arrays


def gops_with_targets(path, indices: list[int]) -> int:
    index = load_index(path)
    return len({int(index.packet_gop[index.frame_packet[i]]) for i in indices})


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("num_frames", [1, 3, 9, 40])
def test_at_most_one_seek_per_gop_with_targets_and_nothing_decoded_twice(workers, num_frames, videos) -> None:
    path = videos["long_gop.mp4"]  # 300 frames, 5 GOPs of 60, 3 B-frames
    sampled = sample_video_arrays(path, num_frames=num_frames, cache=False, workers=workers)
    stats = sampled.stats
    indices = [frame.index for frame in sampled.frames]
    touched = gops_with_targets(path, indices)
    assert stats.seeks <= touched
    assert stats.gops_decoded == touched
    assert stats.duplicate_frames == 0 and stats.retries == 0
    assert stats.frames_decoded == stats.packets_sent  # every packet sent once, one picture each
    assert stats.frames_converted == len(set(indices))
    assert stats.packets_demuxed == stats.packets_sent + stats.packets_skipped


def test_a_few_targets_decode_a_small_part_of_the_file(videos) -> None:
    path = videos["long_gop.mp4"]
    info = load_index(path).info
    sampled = sample_video_arrays(path, times=[0.2, 4.1, 8.05], cache=False, workers=1)
    stats = sampled.stats
    # Each target needs only its GOP's reference pictures up to it: ~6 + ~4 + ~3 of 300 here.
    assert stats.frames_decoded < info.num_frames / 5
    assert stats.seeks == 2  # GOP 0 is read from the start; GOPs 2 and 4 are each one seek
    assert stats.gops_decoded == 3


def test_targets_in_one_gop_need_no_seek_and_skip_non_reference_pictures(videos) -> None:
    path = videos["long_gop.mp4"]
    sampled = sample_video_arrays(path, num_frames=5, start=0.0, end=1.9, cache=False, workers=1)
    stats = sampled.stats
    assert stats.seeks == 0 and stats.gops_decoded == 1
    assert stats.packets_skipped > 0  # non-reference B pictures that are not targets
    last_target = max(frame.index for frame in sampled.frames)
    assert stats.frames_decoded <= last_target + 2  # nothing far past the last target


def test_consecutive_gops_are_read_on_without_seeking(videos) -> None:
    path = videos["cfr.mp4"]  # 10 GOPs of 30 frames
    sampled = sample_video_arrays(path, num_frames=10, cache=False, workers=1)
    assert sampled.stats.gops_decoded == 10
    assert sampled.stats.seeks == 0  # each next GOP starts right after the previous one's tail


def test_every_frame_requested_decodes_each_exactly_once(videos) -> None:
    path = videos["long_gop.mp4"]
    index = load_index(path)
    every = list(range(index.info.num_frames))
    result = decode_frames(path, index, every, lambda frame: frame.pts, workers=2)
    assert result.stats.frames_decoded == index.info.num_frames
    assert result.stats.duplicate_frames == 0
    assert sorted(result.frames.values()) == sorted(int(p) for p in index.frame_pts)


def test_units_start_at_keyframes_and_open_gop_leading_pictures_reach_back(videos) -> None:
    index = load_index(videos["open_gop.mkv"])
    leading = [
        frame
        for frame in range(index.info.num_frames)
        if index.packet_gop[index.frame_packet[frame]] > 0
        and index.packet_pts[index.frame_packet[frame]]
        < index.packet_pts[index.gop_start[index.packet_gop[index.frame_packet[frame]]]]
    ]
    assert leading, "the open-GOP fixture should have leading pictures"
    units = plan_units(index, [leading[0]])
    gop = int(index.packet_gop[index.frame_packet[leading[0]]])
    assert units[0].start == index.gop_start[gop - 1]
    assert all(index.packet_key[unit.start] for unit in plan_units(index, list(range(0, 240, 17))))


def test_non_reference_detection_finds_the_b_pictures(videos) -> None:
    with_b = load_index(videos["long_gop.mp4"])
    without_b = load_index(videos["nob.mp4"])
    assert 0.2 < with_b.packet_skippable.mean() < 0.8
    assert not np.any(with_b.packet_skippable & with_b.packet_key)
    assert without_b.packet_skippable.sum() <= 3  # P-only: at most x264's trailing frames


def test_two_decoders_take_the_costliest_units_first_and_share_them(videos) -> None:
    """One target deep into each of three GOPs and one at the start of two more: the decoders take
    the deep ones first (the cheap ones fill in at the end), each unit once, and both decode."""
    path = videos["long_gop.mp4"]  # 5 GOPs of 60 frames
    index = load_index(path)
    frames = [55, 70, 175, 181, 290]  # GOP 0 deep, GOP 1 shallow, GOP 2 deep, GOP 3 shallow, GOP 4 deep
    units = plan_units(index, frames)
    assert [unit.start for unit in _unit_order(index, units, 1)] == [unit.start for unit in units]
    costs = [_unit_cost(index, unit) for unit in _unit_order(index, units, 2)]
    assert costs == sorted(costs, reverse=True) and costs[0] > 3 * costs[-1]

    converted_by: dict[int, int] = {}

    def convert(frame) -> int:
        converted_by[tagged_position(frame)] = threading.get_ident()
        return int(frame.pts)

    result = decode_frames(path, index, frames, convert, workers=2)
    assert sorted(result.frames) == frames
    assert result.stats.workers == 2 and len(set(converted_by.values())) == 2
    assert result.stats.units == len(units) and result.stats.duplicate_frames == 0
    assert result.stats.seeks <= len(units)
    one = decode_frames(path, index, frames, lambda frame: int(frame.pts), workers=1)
    assert one.frames == result.frames
