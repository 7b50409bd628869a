"""One line per run saying which frames, at which resolution, the model was shown.

Frame count and resolution change scores (papers' ablation tables show it), and the papers print them
next to each row ("GPT-4o (50f, 765p)"), so every report says them too: read from the run's
`manifest.json` (the sampler settings each task used), never from the command line.
"""

from __future__ import annotations

from expvid.run.rundir import RunDir
from expvid.schema import DataError, RunManifest, SamplerSettings


def resolution_text(size: int | None, max_side: int | None) -> str:
    """ "224x224 (squashed)", "longest side <= 1360 px (aspect kept)" or "source size"."""
    if max_side is not None:
        return f"longest side ≤ {max_side} px (aspect kept)"
    if size is not None:
        return f"{size}x{size} (squashed)"
    return "source size (aspect kept)"


def _frames_text(sampler: SamplerSettings) -> str:
    if sampler.strategy == "uniform":
        return f"{sampler.num_frames} uniform"
    if sampler.strategy == "linspace":
        return f"{sampler.num_frames} linspace (first to last frame)"
    cap = f", at most {sampler.max_frames}" if sampler.max_frames is not None else ""
    last = ", last kept" if sampler.strategy == "fps_keep_last" else ""
    return f"{sampler.fps:g} fps{cap}{last}"


def settings_note(manifest: RunManifest) -> str:
    """What the run's model was shown, e.g. "frames 1 fps, at most 50, last kept; longest side <= 1360 px"."""
    settings = manifest.config.get("suite_settings") or manifest.config.get("settings", {})
    judge_input = settings.get("judge_input") if isinstance(settings, dict) else None
    judge = f"; judge input: {judge_input}" if judge_input and judge_input != "raw" else ""
    if not manifest.samplers:
        backend = manifest.config.get("backend", {})
        if isinstance(backend, dict) and backend.get("kind") == "external":
            return f"predictions made outside expvid: frames and resolution not recorded{judge}"
        return f"images sent as released (source size){judge}"
    by_frames: dict[str, list[str]] = {}
    for task, sampler in manifest.samplers.items():
        by_frames.setdefault(_frames_text(sampler), []).append(task)
    if len(by_frames) == 1:
        frames = next(iter(by_frames))
    else:
        frames = "; ".join(f"{text} ({', '.join(tasks)})" for text, tasks in by_frames.items())
    resolutions = list(dict.fromkeys(resolution_text(s.size, s.max_side) for s in manifest.samplers.values()))
    return f"frames {frames}; {' / '.join(resolutions)}{judge}"


def run_settings_note(rundir: RunDir) -> str | None:
    """The note for a run directory; None when it has no readable manifest."""
    if not rundir.manifest_path.is_file():
        return None
    try:
        return settings_note(rundir.read_manifest())
    except DataError:
        return None
