"""`build_promqa(config)`: CaptainCook4D-style recordings in, ProMQA candidates out (3.1-3.2, B.1-B.2).

Order: read the annotations and recipes (`captaincook`) -> find each recording's video -> every
example of every recording (`examples`, B.1's rules) -> sample (`sampling`) -> for each sampled
example, template and generator one generation call (`generation`), while the prefix clips of each
recording are cut from one decode pass in a worker thread -> `examples.json`, `graphs.json`,
`videos/`, `clips/`, `provenance.jsonl`, `build_report.{json,md}`.

Like the ExpVid build: every call is cached by request (a re-run pays for nothing answered
before), counted and priced per generator, re-asked with feedback when the reply has no usable pair;
a unit that still fails is reported (`failed_units`, exit code 1) and asked afresh by the next run.
Bad annotation records are listed as file:line and skipped; recordings without a video are listed
and skipped (their examples could not be verified or evaluated).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from expvid.construction.accounting import Ledger
from expvid.construction.context import link_or_copy
from expvid.construction.estimate import record_usage
from expvid.construction.llm import DraftFailure, LLMClient
from expvid.construction.progress import NO_PROGRESS, PhaseClock, ProgressSink
from expvid.construction.recipes.promqa import candidates as files
from expvid.construction.recipes.promqa.captaincook import Corpus
from expvid.construction.recipes.promqa.config import PromqaBuildConfig
from expvid.construction.recipes.promqa.examples import Example, recording_examples
from expvid.construction.recipes.promqa.generation import PHASE, Generated, Unit, generate
from expvid.construction.recipes.promqa.inputs import load_corpus, recording_videos
from expvid.construction.recipes.promqa.report import markdown_report
from expvid.construction.recipes.promqa.sampling import sample_examples
from expvid.construction.retries import RetryBook
from expvid.construction.state import BuildState, check_out_dir, write_atomic
from expvid.media.cache import FrameCache
from expvid.media.clip_pass import ClipJob, cut_clips
from expvid.media.errors import MediaError
from expvid.models import ModelBackend, create_backend
from expvid.models.spec import model_id
from expvid.schema import DataError

Log = Callable[[str], None]


def _examples(
    corpus: Corpus, videos: dict[str, Path], config: PromqaBuildConfig
) -> tuple[list[Example], Counter[str]]:
    made: list[Example] = []
    skipped: Counter[str] = Counter()
    for recording in corpus.recordings:
        if recording.recording_id not in videos:
            continue
        result = recording_examples(recording, corpus.recipe_for(recording), config.rules)
        made += result.examples
        skipped.update(result.skipped)
    return made, skipped


def _units(samples: list[Example], config: PromqaBuildConfig, names: dict[str, str]) -> list[Unit]:
    variants = len(config.combinations) > 1
    return [
        Unit(
            example=example,
            template=template,
            generator=spec,
            model=names[role],
            role=role,
            question_id=files.item_question_id(example.question_id, template, names[role], variants=variants),
        )
        for example in samples
        for template, spec, role in config.combinations
    ]


def _cut(video: Path, jobs: list[ClipJob], preset: str, crf: int) -> dict[str, Any]:
    started = time.perf_counter()
    _, stats = cut_clips(video, jobs, preset=preset, crf=crf, threads=1)
    return {"seconds": time.perf_counter() - started, "decoded_frames": stats.decoded_frames}


async def build_promqa(
    config: PromqaBuildConfig, *, log: Log | None = None, progress: ProgressSink = NO_PROGRESS
) -> dict[str, Any]:
    """Run the recipe; returns the build report (also written to `out/build_report.json`)."""
    say = log or (lambda _message: None)
    started = time.monotonic()
    out = config.out.expanduser()
    check_out_dir(out)
    corpus = await asyncio.to_thread(load_corpus, config)
    if not corpus.recordings:
        raise DataError(corpus.problems or f"{config.sources}: no recording could be read")
    out.mkdir(parents=True, exist_ok=True)
    state = BuildState(out)
    retries = RetryBook(state.root, retry_failed=config.retry_failed)
    ledger = Ledger(prices=dict(config.prices))
    videos = recording_videos(config, corpus)
    no_video = sorted(r.recording_id for r in corpus.recordings if r.recording_id not in videos)
    examples, skipped = _examples(corpus, videos, config)
    sampled = sample_examples(examples, config.sampling)
    say(
        f"{len(corpus.recordings)} recording(s), {len(examples)} example(s), {len(sampled.samples)} sampled"
        + (f"; {len(no_video)} recording(s) without a video skipped" if no_video else "")
    )
    options = {"concurrency": config.concurrency, **config.backend_options, "cache_dir": state.cache_dir}
    backends: dict[str, ModelBackend] = {}
    try:
        for index, spec in enumerate(config.generators):
            role = "llm" if index == 0 else f"llm{index + 1}"
            backends[role] = create_backend(spec, **options)
        clients = {
            role: LLMClient(backend, role, config, ledger, retries) for role, backend in backends.items()
        }
        names = {role: model_id(client.model) for role, client in clients.items()}
        units = _units(sampled.samples, config, names)
        return await _run(config, out, state, corpus, videos, no_video, examples, skipped, sampled, units,
                          clients, ledger, progress, say, started)  # fmt: skip
    finally:
        for backend in backends.values():
            await backend.aclose()


async def _run(
    config: PromqaBuildConfig, out: Path, state: BuildState, corpus: Corpus, videos: dict[str, Path],
    no_video: list[str], examples: list[Example], skipped: Counter[str], sampled: Any, units: list[Unit],
    clients: dict[str, LLMClient], ledger: Ledger, progress: ProgressSink, say: Log, started: float,
) -> dict[str, Any]:  # fmt: skip
    clock = PhaseClock()
    frame_cache = FrameCache(state.root / "frames")
    limit = asyncio.Semaphore(config.concurrency)
    problems: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    progress.add(PHASE, len(units))

    async def one(unit: Unit) -> Generated | None:
        async with limit:
            recipe = corpus.recipes[unit.example.activity_id]
            try:
                with clock.running(PHASE):
                    return await generate(
                        unit,
                        recipe,
                        clients[unit.role],
                        video=videos.get(unit.example.recording_id),
                        frames=config.frames,
                        max_side=config.max_side,
                        frame_cache=frame_cache,
                        parser=config.parser,
                    )
            except (DraftFailure, MediaError) as error:
                entry = {
                    "unit": unit.question_id,
                    "stage": PHASE,
                    "generator": unit.generator,
                    "template": unit.template,
                    "message": str(error),
                    "transient": bool(getattr(error, "transient", False)),
                    "failed": True,
                }
                problems.append(entry)
                failed.append(entry)
                return None
            finally:
                progress.advance(PHASE)

    # Clip addresses need the recordings' content hashes (remembered in .build/frames/hashes).
    shas = {
        rec: await asyncio.to_thread(frame_cache.content_hash, path)
        for rec, path in videos.items()
        if any(e.recording_id == rec for e in sampled.samples)
    }
    clip_of = {e.example_id: files.clip_path(files.clip_address(shas[e.recording_id], e.end_seconds))
               for e in sampled.samples}  # fmt: skip
    clip_task = asyncio.create_task(_cut_all(out, videos, sampled.samples, clip_of, config, clock, progress))
    generated = await asyncio.gather(*(one(unit) for unit in units))
    clip_stats = await clip_task
    for message in clip_stats.pop("errors"):
        problems.append({"stage": "clips", "message": message, "failed": True, "transient": False})
        failed.append(problems[-1])
    done = [g for g in generated if g is not None]
    used_recordings = sorted({g.unit.example.recording_id for g in done})
    for recording in used_recordings:
        target = out / files.VIDEO_DIR / f"{recording}.mp4"
        if not target.is_file() or target.stat().st_size != videos[recording].stat().st_size:
            await asyncio.to_thread(link_or_copy, videos[recording], target)
    records, provenance = _records(done, clip_of, shas)
    activities = sorted({g.unit.example.activity_id for g in done}, key=lambda a: (len(a), a))
    files.write_json(out / files.EXAMPLES_FILE, records)
    files.write_json(out / files.GRAPHS_FILE, {a: corpus.recipes[a].to_release() for a in activities})
    files.write_jsonl(out / files.PROVENANCE_FILE, provenance)
    _remove_stale_clips(out, {p["clip"] for p in provenance})
    report = _report(config, corpus, videos, no_video, examples, skipped, sampled, units, done, ledger,
                     clock, clip_stats, problems, failed, started)  # fmt: skip
    record_usage(state.root, report["calls"]["by_stage"])
    files.write_json(out / "build_report.json", report)
    write_atomic(out / "build_report.md", markdown_report(report))
    say(f"{len(records)} candidate(s) written to {out}")
    return report


async def _cut_all(
    out: Path, videos: dict[str, Path], samples: list[Example], clip_of: dict[str, str],
    config: PromqaBuildConfig, clock: PhaseClock, progress: ProgressSink,
) -> dict[str, Any]:  # fmt: skip
    """Every missing prefix clip, one decode pass per recording (in a thread, beside the calls)."""
    spans: dict[str, dict[str, float]] = defaultdict(dict)
    for example in samples:
        spans[example.recording_id][clip_of[example.example_id]] = example.end_seconds
    stats: dict[str, Any] = {"clips": 0, "reused": 0, "recordings": 0, "seconds": 0.0, "decoded_frames": 0,
                             "errors": []}  # fmt: skip
    todo = {
        rec: [
            ClipJob(str(out / path), 0.0, end)
            for path, end in sorted(paths.items())
            if not (out / path).is_file()
        ]
        for rec, paths in spans.items()
    }
    stats["reused"] = sum(len(paths) for paths in spans.values()) - sum(len(j) for j in todo.values())
    progress.add("clips", sum(len(j) for j in todo.values()))
    for recording, jobs in sorted(todo.items()):
        if not jobs:
            continue
        (out / files.CLIP_DIR).mkdir(parents=True, exist_ok=True)
        try:
            with clock.running("clips"):
                done = await asyncio.to_thread(_cut, videos[recording], jobs, config.preset, config.crf)
        except MediaError as error:
            stats["errors"].append(f"{recording}: {error}")
            continue
        finally:
            progress.advance("clips", len(jobs))
        stats["clips"] += len(jobs)
        stats["recordings"] += 1
        stats["seconds"] += done["seconds"]
        stats["decoded_frames"] += done["decoded_frames"]
    stats["seconds"] = round(stats["seconds"], 3)
    return stats


def _records(
    done: list[Generated], clip_of: dict[str, str], shas: dict[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records, provenance = [], []
    for generated in sorted(done, key=lambda g: g.unit.question_id):
        unit, example = generated.unit, generated.unit.example
        pair = generated.pair
        record = example.record()
        record["question_id"] = unit.question_id
        record = {**record, "generation": generated.generation_record()}
        record["question"] = pair.question
        record["answers"] = list(pair.answers)
        record["answer_tags"] = ["machine"] * len(pair.answers)
        records.append(record)
        clip = clip_of[example.example_id]
        address = Path(clip).stem
        key = files.draft_key(example.type, example.recording_id, example.current_step["step_id"],
                              example.end_seconds, unit.template, generated.model_id)  # fmt: skip
        provenance.append(
            {
                "item": f"{example.type}/{unit.question_id}",
                "uid": f"{example.type}/{unit.question_id}",
                "question_id": unit.question_id,
                "suite": "promqa",
                "task": example.type,
                "experiment_id": example.recording_id,
                "draft_key": key,
                "content_sha256": files.content_sha256(pair.question, list(pair.answers), address),
                "example_id": example.example_id,
                "activity_id": example.activity_id,
                "source": {"video": f"{files.VIDEO_DIR}/{example.recording_id}.mp4", "start": 0.0,
                           "end": example.end_seconds, "video_sha256": shas[example.recording_id]},
                "clip": clip,
                "template": unit.template,
                "generator": generated.model_id,
                "picked": generated.picked,
                "pairs": len(generated.drafted.value),
                "drafts": [generated.drafted.provenance()],
                "flags": [],
            }
        )  # fmt: skip
    return records, provenance


def _remove_stale_clips(out: Path, keep: set[str]) -> None:
    folder = out / files.CLIP_DIR
    if not folder.is_dir():
        return
    for path in folder.glob("*.mp4"):
        if f"{files.CLIP_DIR}/{path.name}" not in keep:
            path.unlink()


def _report(
    config: PromqaBuildConfig, corpus: Corpus, videos: dict[str, Path], no_video: list[str],
    examples: list[Example], skipped: Counter[str], sampled: Any, units: list[Unit], done: list[Generated],
    ledger: Ledger, clock: PhaseClock, clip_stats: dict[str, Any], problems: list[dict[str, Any]],
    failed: list[dict[str, Any]], started: float,
) -> dict[str, Any]:  # fmt: skip
    by_type = Counter(e.type for e in examples)
    sample_counts: dict[str, dict[str, int]] = defaultdict(lambda: Counter())
    for example in sampled.samples:
        cell = f"{'noisy' if example.is_noisy else 'clean'}, {'with' if example.has_target else 'without'} target"
        sample_counts[example.type][cell] += 1
    combos: dict[str, dict[str, int]] = defaultdict(lambda: Counter())
    for unit in units:
        combos[f"{unit.template} | {unit.model}"]["asked"] += 1
    for generated in done:
        combos[f"{generated.unit.template} | {generated.unit.model}"]["generated"] += 1
        combos[f"{generated.unit.template} | {generated.unit.model}"]["pairs"] += len(generated.drafted.value)
    seconds = clock.seconds()
    return {
        "format": files.FORMAT,
        "recipe": "promqa",
        "seconds": round(time.monotonic() - started, 2),
        "settings": {
            "generators": list(config.generators),
            "templates": list(config.templates),
            "parser": config.parser,
            "corrections": config.corrections,
            "require_4k": config.require_4k,
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "sampling": config.sampling.model_dump(),
            "rules": {"min_seconds": config.rules.min_seconds, "overlap_margin": config.rules.overlap_margin},
            "seed": config.seed,
            "cost": config.cost.model_dump(),
        },
        **ledger.as_dict(),
        "corpus": {
            "recordings": len(corpus.recordings),
            "with_video": len(videos),
            "without_video": no_video,
            "recipes": len(corpus.recipes),
            "problems": [str(p) for p in corpus.problems],
            "warnings": corpus.warnings,
            "excluded": dict(sorted(corpus.excluded.items())),
            "corrections": None if corpus.corrections is None else corpus.corrections.as_dict(),
        },
        "examples": {"made": dict(sorted(by_type.items())), "total": len(examples), "skipped": dict(skipped)},
        "sampling": {
            "sampled": {k: dict(v) for k, v in sorted(sample_counts.items())},
            "total": len(sampled.samples),
            "left_out": {
                k: {reason: n for reason, n in v.items() if n}
                for k, v in sampled.left_out.items()
                if any(v.values())
            },
        },
        "generation": {
            "combinations": {k: dict(v) for k, v in sorted(combos.items())},
            "items": len(done),
            "seconds": seconds.get(PHASE, 0.0),
        },
        "clips": {**clip_stats, "wall_seconds": seconds.get("clips", 0.0)},
        "total_items": len(done),
        "problems": problems,
        "failed_units": failed,
    }
