"""The frame cache: hits cost no decoding, keys follow content and settings, damage is survived."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from expvid.media import cache as cache_module
from expvid.media import fileid
from expvid.media.cache import FrameCache, default_cache_dir, hash_file
from expvid.media.sampler import sample_video, sample_video_arrays


@pytest.fixture
def frame_cache(tmp_path: Path) -> FrameCache:
    return FrameCache(tmp_path / "cache")


def entries(cache: FrameCache) -> list[Path]:
    return sorted(cache.frames_dir.rglob("*.bin"))


def test_second_request_is_served_from_the_cache(videos, frame_cache: FrameCache) -> None:
    path = videos["long_gop.mp4"]
    first = sample_video(path, num_frames=12, cache=frame_cache)
    assert not first.from_cache and first.stats.frames_decoded > 0
    started = time.perf_counter()
    second = sample_video(path, num_frames=12, cache=frame_cache)
    elapsed = time.perf_counter() - started
    assert second.from_cache
    assert second.stats.frames_decoded == 0 and second.stats.seeks == 0
    assert [(f.index, f.time, f.target, f.data) for f in second.frames] == [
        (f.index, f.time, f.target, f.data) for f in first.frames
    ]
    assert second.info == first.info and second.window == first.window
    assert elapsed < 0.25
    assert len(entries(frame_cache)) == 1


def test_cached_arrays_equal_decoded_arrays(videos, frame_cache: FrameCache) -> None:
    path = videos["rot90.mp4"]
    cold = sample_video_arrays(path, num_frames=6, max_side=100, cache=frame_cache)
    warm = sample_video_arrays(path, num_frames=6, max_side=100, cache=frame_cache)
    assert warm.from_cache and not cold.from_cache
    assert np.array_equal(cold.stack(), warm.stack())
    assert warm.stack().shape == (6, 60, 100, 3)  # displayed 160x96 (stored 96x160)


@pytest.mark.parametrize(
    "change",
    [
        {"num_frames": 13},
        {"start": 1.0},
        {"size": 112},
        {"max_side": 120},
        {"image_format": "png"},
        {"quality": 70},
    ],
)
def test_any_setting_change_is_a_different_entry(change: dict, videos, frame_cache: FrameCache) -> None:
    path = videos["cfr.mp4"]
    base = {"num_frames": 12}
    sample_video(path, **base, cache=frame_cache)
    changed = sample_video(path, **{**base, **change}, cache=frame_cache)
    assert not changed.from_cache
    assert len(entries(frame_cache)) == 2


def test_key_follows_file_content_not_path(videos, frame_cache: FrameCache, tmp_path: Path) -> None:
    copy = tmp_path / "renamed copy.mp4"
    copy.write_bytes(videos["cfr.mp4"].read_bytes())
    sample_video(videos["cfr.mp4"], num_frames=5, cache=frame_cache)
    hit = sample_video(copy, num_frames=5, cache=frame_cache)
    assert hit.from_cache and hit.info.path == str(copy)

    copy.write_bytes(videos["cfr.mkv"].read_bytes())  # same path, new content
    miss = sample_video(copy, num_frames=5, cache=frame_cache)
    assert not miss.from_cache and miss.info.container.startswith("matroska")


def test_content_hash_is_remembered_not_recomputed(
    videos, frame_cache: FrameCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fileid, "RACY_NS", 0)  # just written: remembered at once (see the racy test)
    path = tmp_path / "clip.mp4"
    path.write_bytes(videos["cfr.mp4"].read_bytes())
    real = hash_file(path)
    assert frame_cache.content_hash(path) == real
    memo_files = list(frame_cache.hashes_dir.glob("*.json"))
    assert len(memo_files) == 1
    # Prove the on-disk memo is used (no rehash): plant a different value for this identity.
    record = json.loads(memo_files[0].read_text())
    memo_files[0].write_text(json.dumps({**record, "sha256": "planted"}))
    cache_module._hash_memo.clear()
    assert frame_cache.content_hash(path) == "planted"
    # A rewrite changes the identity (size/mtime), so the file is hashed again.
    path.write_bytes(videos["cfr.mp4"].read_bytes() + b"\0")
    assert frame_cache.content_hash(path) == hash_file(path) != real


@pytest.mark.parametrize("damage", ["garbage", "truncate", "flip"])
def test_a_damaged_entry_is_ignored_and_rebuilt(damage: str, videos, frame_cache: FrameCache) -> None:
    path = videos["cfr.mp4"]
    original = sample_video(path, num_frames=4, cache=frame_cache)
    (entry,) = entries(frame_cache)
    data = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(b"not a cache entry")
    elif damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    else:
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    rebuilt = sample_video(path, num_frames=4, cache=frame_cache)
    assert not rebuilt.from_cache
    assert [f.data for f in rebuilt.frames] == [f.data for f in original.frames]
    assert sample_video(path, num_frames=4, cache=frame_cache).from_cache


def test_disabled_cache_writes_nothing(videos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPVID_CACHE_DIR", str(tmp_path / "default"))
    assert default_cache_dir() == tmp_path / "default"
    sample_video(videos["cfr.mp4"], num_frames=3, cache=False)
    second = sample_video(videos["cfr.mp4"], num_frames=3, cache=False)
    assert not second.from_cache and not (tmp_path / "default").exists()
    sample_video(videos["cfr.mp4"], num_frames=3)  # cache=True: the default directory
    assert sample_video(videos["cfr.mp4"], num_frames=3).from_cache
    assert list((tmp_path / "default" / "frames").rglob("*.bin"))


def test_unwritable_cache_does_not_fail_sampling(videos, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    sampled = sample_video(videos["cfr.mp4"], num_frames=3, cache=FrameCache(blocker))
    assert len(sampled.frames) == 3 and not sampled.from_cache


_WORKER = """
import sys
from expvid.media.cache import FrameCache
from expvid.media.sampler import sample_video
result = sample_video(sys.argv[1], num_frames=20, cache=FrameCache(sys.argv[2]), workers=1)
print(",".join(str(f.index) for f in result.frames))
"""


def test_concurrent_processes_share_one_cache(videos, frame_cache: FrameCache) -> None:
    path = videos["long_gop.mp4"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), str(frame_cache.root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [proc.communicate(timeout=60) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outputs
    assert len({out for out, _ in outputs}) == 1
    assert len(entries(frame_cache)) == 1
    assert not [p for p in frame_cache.root.rglob(".tmp-*")]  # no temporary files left behind
    hit = sample_video(path, num_frames=20, cache=frame_cache, workers=1)
    assert hit.from_cache and ",".join(str(f.index) for f in hit.frames) == outputs[0][0].strip()


def test_a_cache_only_lookup_never_hashes_or_decodes(
    videos, frame_cache: FrameCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the runner answers in its event loop: a hit from a known hash, else None at once."""
    from expvid.media.sampler import cached_sample_with_settings, sample_with_settings
    from expvid.schema import SamplerSettings

    monkeypatch.setattr(fileid, "RACY_NS", 0)
    path = tmp_path / "clip.mp4"
    path.write_bytes(videos["cfr.mp4"].read_bytes())
    settings = SamplerSettings(num_frames=4, size=32)

    def no_hashing(_: object) -> str:
        raise AssertionError("a cache-only lookup hashed the file")

    with monkeypatch.context() as patched:
        patched.setattr(cache_module, "hash_file", no_hashing)
        assert cached_sample_with_settings(path, settings, cache=frame_cache) is None  # hash unknown
    decoded = sample_with_settings(path, settings, cache=frame_cache)
    with monkeypatch.context() as patched:
        patched.setattr(cache_module, "hash_file", no_hashing)
        hit = cached_sample_with_settings(path, settings, cache=frame_cache)
        assert hit is not None and hit.from_cache
        assert [f.data for f in hit.frames] == [f.data for f in decoded.frames]
        other = SamplerSettings(num_frames=5, size=32)
        assert cached_sample_with_settings(path, other, cache=frame_cache) is None  # not cached: no decoding
