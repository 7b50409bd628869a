"""`make_sample`: write the whole sample benchmark into a directory.

Order matters for safety: claim the directory with a marker first, write annotations, sources
and videos, and write the full truth sidecar last. A directory that is not empty and holds no
sample is never touched, even with `force`; with `force`, only the paths this generator writes
are removed before regenerating.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from expvid.suites.release_io import SampleDirectoryError, remove_owned
from expvid.suites.sample.layout import TRUTH_FILE, source_video
from expvid.suites.sample.plan import PlannedExperiment
from expvid.suites.sample.release import plan_release, write_annotations
from expvid.suites.sample.scripts import load_scripts
from expvid.suites.sample.sidecars import SIDECAR_PATHS, write_sidecars
from expvid.suites.sample.sources import write_sources
from expvid.suites.sample.timeline import plan_timeline
from expvid.suites.sample.truth import build_truth, is_sample_dir, write_marker, write_truth
from expvid.suites.sample.videos import VideoJob, run_video_jobs

#: Top-level paths the generator owns inside a sample directory.
OWNED_PATHS = ("annotations", "videos", "sources", *SIDECAR_PATHS, TRUTH_FILE)


@dataclass(frozen=True)
class SampleSummary:
    root: Path
    seed: int
    experiments: tuple[str, ...]  # video ids in the release
    rejected: tuple[str, ...]  # video ids with sources only (curation should reject them)
    items: dict[str, int]  # task -> number of items
    clips: int  # video files under videos/
    videos: bool  # False when generated with render_videos=False (annotations and truth only)
    seconds: float

    @property
    def total_items(self) -> int:
        return sum(self.items.values())


def make_sample(
    directory: Path | str,
    seed: int = 0,
    *,
    force: bool = False,
    workers: int | None = None,
    render_videos: bool = True,
) -> SampleSummary:
    """Generate the sample ExpVid release, raw sources and truth sidecar into `directory`.

    The release is also a complete candidate directory (`provenance.jsonl`, `segments.jsonl`,
    `experiments.jsonl`, `papers/`; see `sidecars.py`), ready for `expvid platform import`.

    Same seed -> byte-identical annotation files and truth sidecar. `render_videos=False` skips
    encoding (annotations, sources' text files and truth only) for callers that need no media.
    """
    started = time.perf_counter()
    root = Path(directory).expanduser()
    _prepare(root, force)
    write_marker(root, seed)

    scripts = load_scripts()
    planned = [PlannedExperiment(script, plan_timeline(script, seed)) for script in scripts]
    kept = [experiment for experiment in planned if experiment.script.kept]
    plan = plan_release(kept, seed)
    write_annotations(root, plan)
    write_sidecars(root, kept, plan)  # candidate-directory sidecars (segments, papers, windows)
    for experiment in planned:
        write_sources(root, experiment.script, experiment.timeline)
    if render_videos:
        jobs = [
            VideoJob(
                script=e.script,
                timeline=e.timeline,
                source_path=source_video(e.video_id),
                clips=tuple(plan.clips_for(e.video_id)),
            )
            for e in planned
        ]
        run_video_jobs(root, jobs, workers=workers)
    write_truth(root, build_truth(seed, planned, plan))
    return SampleSummary(
        root=root,
        seed=seed,
        experiments=tuple(e.video_id for e in kept),
        rejected=tuple(e.video_id for e in planned if not e.script.kept),
        items={task: len(records) for task, records in plan.records.items()},
        clips=len(plan.clips),
        videos=render_videos,
        seconds=time.perf_counter() - started,
    )


def _prepare(root: Path, force: bool) -> None:
    if root.exists() and not root.is_dir():
        raise SampleDirectoryError(f"{root} exists and is not a directory")
    if root.is_dir() and any(root.iterdir()):
        if not is_sample_dir(root):
            raise SampleDirectoryError(
                f"refusing to write into {root}: it is not empty and holds no expvid sample "
                f"(no {TRUTH_FILE} from this generator); choose an empty or new directory"
            )
        if not force:
            raise SampleDirectoryError(f"{root} already holds a sample; pass --force to overwrite it")
        remove_owned(root, OWNED_PATHS)
    root.mkdir(parents=True, exist_ok=True)
