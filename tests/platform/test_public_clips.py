"""Public copies of clips have continuous timestamps from 0: a "removed step" clip made by stream
copy no longer shows where the missing step was (a 1.9 -> 4.0 s hole), nor where in the source it
was cut; a variable-frame-rate recording keeps its own frame times. Checked with PyAV on the files."""

from __future__ import annotations

import itertools
import math
import shutil
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from platform_env import add_users
from sqlalchemy import select

from expvid.media.synth import read_frame_code, scene_frame, write_video
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Item
from expvid.platform.services.clean_copy import clean_copy
from expvid.platform.services.errors import Actor
from expvid.platform.services.exporter import export_public
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.review import DecisionInput, submit_decision

RATE = 16_000


def _with_audio(video: Path, target: Path, seconds: float) -> None:
    """`video` plus an AAC tone track (packets copied, audio encoded), as a camera file has."""
    with av.open(str(video)) as src, av.open(str(target), "w") as dst:
        out_video = dst.add_stream_from_template(src.streams.video[0])
        audio = dst.add_stream("aac", rate=RATE, layout="mono")
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is None:
                continue
            packet.stream = out_video
            dst.mux(packet)
        samples = int(seconds * RATE)
        tone = (0.2 * np.sin(2 * math.pi * 440 * np.arange(samples) / RATE)).astype(np.float32)
        for start in range(0, samples, 1024):
            frame = av.AudioFrame.from_ndarray(tone[None, start : start + 1024], format="fltp", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = RATE, start, Fraction(1, RATE)
            for packet in audio.encode(frame):
                dst.mux(packet)
        for packet in audio.encode(None):
            dst.mux(packet)


def removed_step_clip(folder: Path, *, first_code: int = 0) -> Path:
    """6 s at 10 fps with sound, a step (2.0-4.0 s) removed by stream copy (keyframes every second),
    timestamps kept as a copy keeps them: the clip shows 1.9 s, then 4.0 s."""
    plain, sound, clip = folder / "plain.mp4", folder / "sound.mp4", folder / "clip_1_removed_step_2.mp4"
    write_video(
        plain, (scene_frame(first_code + i, 96, 64) for i in range(60)), fps=10, gop=10, preset="ultrafast"
    )
    _with_audio(plain, sound, 6.0)
    with av.open(str(sound)) as src, av.open(str(clip), "w") as dst:
        streams = list(src.streams)
        outs = {s.index: dst.add_stream_from_template(s) for s in streams}
        for packet in src.demux(streams):
            if packet.dts is None or packet.pts is None:
                continue
            if 2.0 <= float(packet.pts * packet.time_base) < 4.0:
                continue
            packet.stream = outs[packet.stream.index]
            dst.mux(packet)
    return clip


def _frames(path: Path) -> tuple[list[float], list[int]]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [(float(f.pts * stream.time_base), read_frame_code(f.to_ndarray(format="rgb24")))
                  for f in container.decode(stream)]  # fmt: skip
    return [t for t, _ in frames], [c for _, c in frames]


def _audio(path: Path) -> list[tuple[float, float]]:
    with av.open(str(path)) as container:
        if not container.streams.audio:
            return []
        stream = container.streams.audio[0]
        return [(float(p.pts * stream.time_base), float(p.duration * stream.time_base))
                for p in container.demux(stream) if p.pts is not None]  # fmt: skip


def _continuous(times: list[float], step: float) -> bool:
    return all(math.isclose(b - a, step, abs_tol=1e-3) for a, b in itertools.pairwise(times))


def test_a_removed_step_clip_is_retimed_without_its_hole(tmp_path: Path) -> None:
    clip = removed_step_clip(tmp_path)
    times, codes = _frames(clip)
    assert 4.0 in times and 1.9 in times and 2.0 not in times  # the hole a stream copy leaves
    sound = _audio(clip)
    assert max(b[0] - a[0] for a, b in itertools.pairwise(sound)) > 1.5  # and in the sound

    copy = clean_copy(clip, tmp_path / "public")
    new_times, new_codes = _frames(copy)
    assert new_codes == codes  # the same pictures, bit for bit (no re-encoding)...
    assert new_times[0] == 0.0 and _continuous(new_times, 0.1)  # ...shown without a gap
    assert math.isclose(new_times[-1], 3.9, abs_tol=1e-3)
    audio = _audio(copy)
    assert len(audio) == len(_audio(clip)) and audio[0][0] <= 0.07
    for (start, duration), (following, _) in itertools.pairwise(audio):
        assert math.isclose(start + duration, following, abs_tol=1e-3)  # no hole in the sound either
    assert audio[-1][0] < 4.2


def test_a_clip_cut_late_in_its_source_starts_at_zero_and_vfr_keeps_its_times(tmp_path: Path) -> None:
    late = tmp_path / "late.mp4"
    write_video(late, (scene_frame(i, 96, 64) for i in range(20)), fps=10, gop=10, preset="ultrafast",
                times=[37.2 + 0.1 * i for i in range(20)])  # fmt: skip
    assert _frames(late)[0][0] > 37
    times, _ = _frames(clean_copy(late, tmp_path / "public"))
    assert times[0] == 0.0 and _continuous(times, 0.1)

    vfr = tmp_path / "vfr.mp4"
    irregular = [0.0, 0.033, 0.070, 0.100, 0.140, 0.166, 0.210, 0.233, 0.280, 0.300, 0.333, 0.370]
    write_video(vfr, (scene_frame(i, 96, 64) for i in range(len(irregular))), fps=30, preset="ultrafast",
                times=irregular)  # fmt: skip
    before, _ = _frames(vfr)
    after, _ = _frames(clean_copy(vfr, tmp_path / "public-vfr"))
    assert [round(t - after[0], 3) for t in after] == [round(t - before[0], 3) for t in before]


def test_the_exported_removed_step_clip_is_continuous(db_url: str, candidates: Path, tmp_path: Path) -> None:
    root = tmp_path / "candidates"
    shutil.copytree(candidates, root)
    holey = removed_step_clip(tmp_path)
    verification = root / "videos" / "level_2" / "video_verification" / "E1" / "clip_1_removed_step_2.mp4"
    verification.write_bytes(holey.read_bytes())
    database = Database(db_url)
    try:
        users = add_users(database, {"ann1": ("annotator", []), "ann2": ("annotator", [])})
        import_candidates(database, root)
        with database.write() as db:
            item = db.scalar(select(Item).where(Item.release_key == "video_verification/0"))
            assert item is not None
            for name in ("ann1", "ann2"):
                actor = Actor(users[name], name, "annotator")
                submit_decision(
                    db, actor, item.id, DecisionInput("approve", "step 2 is missing", item.version)
                )
        out = tmp_path / "release"
        export_public(database, out)
    finally:
        database.dispose()
    exported = [p for p in (out / "videos" / "level_2").rglob("*.mp4")]
    assert len(exported) == 1
    times, codes = _frames(exported[0])
    assert times[0] == 0.0 and _continuous(times, 0.1) and len(times) == 40
    assert codes == _frames(holey)[1]
    sound = _audio(exported[0])
    assert sound and all(math.isclose(a[0] + a[1], b[0], abs_tol=1e-3) for a, b in itertools.pairwise(sound))
