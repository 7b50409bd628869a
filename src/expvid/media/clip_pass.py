"""Every clip of one source video cut from ONE ordered decode pass.

`cut_clip` (clips.py) seeks, decodes and encodes one clip at a time. A build cuts many clips from the
same video: Level-1 sentence clips, three Level-2 clips per stage that share most of their frames
(the whole stage, the stage minus a step, the stage up to its last step) and the Level-3 video, so
the per-clip way decodes a stage's frames three times and the video four to five times in all.
Decoding is most of the work of cutting, so `cut_clips` decodes the union of the spans once, in
presentation order, and hands each decoded frame to every clip whose span holds it; each clip has its
own encoder, opened when its first frame arrives and closed (and renamed into place) after its last.

The frame rule and the output timing are exactly those of `cut_clip` (same selection, same retiming,
same durations, rotation copied, no audio): both go through `_kept` and `TIME_EPSILON`, and the tests
compare the two frame by frame. Spans far apart (more than `seek_gap` seconds of unused video) are
reached by a seek instead of decoding the stretch between them; `PassStats` says how many frames were
decoded, so "decode passes" (decoded frames / frames in the video) can be measured.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av

from expvid.media.clips import TIME_EPSILON, ClipResult, Span, _check_spans, _kept
from expvid.media.container import corrupt, open_video
from expvid.media.errors import EmptyMediaError, MediaError

#: Unused video longer than this between two spans is skipped with a seek rather than decoded.
DEFAULT_SEEK_GAP = 10.0


@dataclass(frozen=True, slots=True)
class ClipJob:
    """One clip to write: `target` gets the frames of [start, end) minus `remove`."""

    target: str
    start: float
    end: float
    remove: tuple[Span, ...] = ()


@dataclass(slots=True)
class PassStats:
    """What one pass over a video cost: frames decoded, seeks made, clips written."""

    decoded_frames: int = 0
    seeks: int = 0
    clips: int = 0


@dataclass
class _Writer:
    """One clip being encoded while the shared decode goes by (the state `_copy_frames` keeps)."""

    job: ClipJob
    remove: list[Span]
    codec: str
    crf: int
    preset: str
    threads: int
    partial: Path = field(init=False)
    container: av.container.OutputContainer | None = None
    stream: av.VideoStream | None = None
    written: int = 0
    removed: int = 0
    shift: int | None = None
    gap_start: int | None = None
    last_pts: int = -1
    last_kept_pts: int = -1
    first_time: float = 0.0
    last_time: float = 0.0
    last_duration: int = 0
    done: bool = False

    def __post_init__(self) -> None:
        target = Path(self.job.target)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.partial = target.with_name(f".{target.name}.partial")

    def _open(self, frame: av.VideoFrame, time_base: Fraction, rate: Fraction) -> None:
        self.container = av.open(str(self.partial), "w", format="mp4")
        out = self.container.add_stream(self.codec, rate=rate)
        assert isinstance(out, av.VideoStream)
        out.pix_fmt = "yuv420p"
        out.time_base = time_base
        out.codec_context.time_base = time_base
        out.codec_context.thread_count = self.threads
        if self.codec == "libx264":
            out.options = {"crf": str(self.crf), "preset": self.preset}
        rotation = getattr(frame, "rotation", 0) or 0
        if rotation % 360:
            out.set_display_rotation(rotation % 360)
        out.width, out.height = frame.width, frame.height
        self.stream = out

    def feed(
        self, frame: av.VideoFrame, image: av.VideoFrame, pts: int, t: float, tb: Fraction, rate: Fraction
    ) -> None:
        """One decoded frame (in presentation order); `image` is it in yuv420p. Sets `done` at the end."""
        job = self.job
        if self.last_kept_pts >= 0 and self.last_pts == self.last_kept_pts:
            self.last_duration = pts - self.last_kept_pts
        self.last_pts = pts
        if t >= job.end - TIME_EPSILON:
            self.done = True
            return
        if not _kept(t, job.start, job.end, self.remove):
            if t >= job.start - TIME_EPSILON:
                self.removed += 1
            if self.written and self.gap_start is None:
                self.gap_start = pts
            return
        if self.shift is None:
            self.shift = pts
            self.first_time = t
            self._open(frame, tb, rate)
        elif self.gap_start is not None:
            self.shift += pts - self.gap_start  # close up the removed stretch
        self.gap_start = None
        assert self.container is not None and self.stream is not None
        image.pts = pts - self.shift
        image.time_base = tb
        for packet in self.stream.encode(image):
            self.container.mux(packet)
        self.written += 1
        self.last_kept_pts = pts
        self.last_time = t

    def finish(self, source: Path, tb: Fraction, rate: Fraction) -> ClipResult:
        if self.written == 0 or self.container is None or self.stream is None:
            self.abort()
            raise EmptyMediaError(
                source, f"no frame in [{self.job.start:.3f}, {self.job.end:.3f}) s once removed spans are cut"
            )
        for packet in self.stream.encode():
            self.container.mux(packet)
        self.container.close()
        self.container = None
        target = Path(self.job.target)
        os.replace(self.partial, target)
        tail = self.last_duration if self.last_duration > 0 else round(1 / (tb * rate))
        duration = float((self.last_kept_pts - (self.shift or 0) + tail) * tb)
        return ClipResult(target, self.written, duration, self.first_time, self.last_time, self.removed)

    def abort(self) -> None:
        if self.container is not None:
            with contextlib.suppress(av.FFmpegError):
                self.container.close()
            self.container = None
        self.partial.unlink(missing_ok=True)


def _runs(jobs: list[ClipJob], seek_gap: float) -> list[tuple[float, float, list[int]]]:
    """Clips grouped into stretches decoded without a seek: (start, end, job indices by start)."""
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].start, jobs[i].end))
    runs: list[tuple[float, float, list[int]]] = []
    for index in order:
        job = jobs[index]
        if runs and job.start <= runs[-1][1] + seek_gap:
            start, end, members = runs[-1]
            runs[-1] = (start, max(end, job.end), [*members, index])
        else:
            runs.append((job.start, job.end, [index]))
    return runs


def cut_clips(
    source: str | os.PathLike[str],
    jobs: Sequence[ClipJob],
    *,
    codec: str = "libx264",
    crf: int = 23,
    preset: str = "veryfast",
    threads: int = 1,
    seek_gap: float = DEFAULT_SEEK_GAP,
    decode_threads: int = 0,
) -> tuple[list[ClipResult], PassStats]:
    """Write every clip of `jobs` (results in the same order) from one ordered decode of `source`.

    `threads` are the encoder's threads per clip and `decode_threads` the decoder's (0: FFmpeg's
    automatic count). Each clip is written under a temporary name and renamed when complete, as
    `cut_clip` does. A clip
    with no frame raises `EmptyMediaError` after the others are finished; a decode error raises
    `CorruptMediaError` naming the source, and no partial file is left behind.
    """
    source_path = Path(source)
    job_list = list(jobs)
    spans = [_check_spans(source_path, float(j.start), float(j.end), j.remove) for j in job_list]
    stats = PassStats()
    results: list[ClipResult | None] = [None] * len(job_list)
    empty: list[str] = []
    if not job_list:
        return [], stats
    with open_video(source_path) as (container, stream):
        stream.thread_type = "AUTO"
        if decode_threads:  # several cutting processes share the cores (0: FFmpeg's count, all cores)
            stream.codec_context.thread_count = decode_threads
        time_base = stream.time_base
        if time_base is None:
            raise MediaError(source_path, "video stream has no time base")
        rate = stream.average_rate or stream.guessed_rate or Fraction(30)
        writers: dict[int, _Writer] = {}
        last_pts = -1
        try:
            for run_start, _run_end, members in _runs(job_list, seek_gap):
                pending = list(members)  # not yet started, by start time
                if run_start > 0 and (last_pts < 0 or run_start - float(last_pts * time_base) > seek_gap):
                    target = Fraction(run_start).limit_denominator(10**9) - Fraction(1, 1000)
                    container.seek(max(0, int(target / time_base)), stream=stream, backward=True)
                    stats.seeks += 1
                for frame in container.decode(stream):
                    if frame.pts is None:
                        continue
                    pts = frame.pts
                    stats.decoded_frames += 1
                    if pts <= last_pts:  # a decoder repeating a frame after a seek
                        continue
                    last_pts = pts
                    t = float(pts * time_base)
                    while pending and job_list[pending[0]].start - TIME_EPSILON <= t:
                        index = pending.pop(0)
                        writers[index] = _Writer(job_list[index], spans[index], codec, crf, preset, threads)
                    if writers:
                        image = frame.reformat(format="yuv420p") if frame.format.name != "yuv420p" else frame
                        for index, writer in list(writers.items()):
                            writer.feed(frame, image, pts, t, time_base, rate)
                            if writer.done:
                                del writers[index]
                                _close(writer, index, results, empty, source_path, time_base, rate)
                    if not pending and not writers:
                        break
                for index, writer in list(writers.items()):  # the video ended inside these clips
                    del writers[index]
                    _close(writer, index, results, empty, source_path, time_base, rate)
                for index in pending:  # spans that start after the last frame
                    empty.append(f"[{job_list[index].start:.3f}, {job_list[index].end:.3f})")
        except av.FFmpegError as error:
            for writer in writers.values():
                writer.abort()
            raise corrupt(source_path, "cutting clips", error) from None
        except BaseException:
            for writer in writers.values():
                writer.abort()
            raise
    stats.clips = sum(r is not None for r in results)
    if empty:
        raise EmptyMediaError(source_path, f"no frame in {', '.join(empty)} s once removed spans are cut")
    return [r for r in results if r is not None], stats


def _close(
    writer: _Writer,
    index: int,
    results: list[ClipResult | None],
    empty: list[str],
    source: Path,
    time_base: Fraction,
    rate: Fraction,
) -> None:
    try:
        results[index] = writer.finish(source, time_base, rate)
    except EmptyMediaError:
        empty.append(f"[{writer.job.start:.3f}, {writer.job.end:.3f})")
