"""`build_candidates(config)`: sources in, candidate directory out (ExpVid sections 3.1-3.3, appendix G).

Order: discover experiments -> speech-to-text for those with a video and no transcript (`-R stt=...`;
cached by audio content, `speech/`) -> load them -> score transcripts -> curation decision (with the human
review of `curation.csv`; `review=True` stops here) -> per kept experiment, Level 1 and Level 2 side
by side, then Level 3 (its trimming needs Level 2's steps), then all of its clips from one decode pass
in a worker process -> letters, ids and records -> audits -> files and reports. Every model call goes
through `LLMClient` (validated, re-asked when invalid, cached by request and model, counted). A
failure is recorded where it happens and skipped, and the report lists every failed unit
(`failed_units`; the command exits non-zero, and the next run asks exactly those again); only bad
arguments (no sources, an output folder that is not ours, an unknown model spec) stop a build before
it starts.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from expvid.construction.accounting import Ledger
from expvid.construction.audits import (
    PHRASE_TASKS,
    AuditResult,
    asr_leakage,
    balance_report,
    blind_audit,
    everyday_words,
    implausible_distractors,
    ordering_shortcuts,
    position_flags,
    text_checks,
)
from expvid.construction.config import BuildConfig
from expvid.construction.context import BuildContext, LoadedExperiment, link_or_copy
from expvid.construction.curation import (
    CurationReport,
    curation_markdown,
    decide,
    score_transcript,
    write_review_csv,
)
from expvid.construction.digests import DigestCache
from expvid.construction.domain import DomainVocabulary
from expvid.construction.drafts import ClipSpec, Problem, StageOutput
from expvid.construction.estimate import record_usage
from expvid.construction.level1 import run_level1
from expvid.construction.level2 import run_level2
from expvid.construction.level3 import run_level3
from expvid.construction.llm import LLMClient
from expvid.construction.preflight import check_context
from expvid.construction.progress import NO_PROGRESS, ProgressSink
from expvid.construction.report import (
    add_speech_cost,
    flags_section,
    items_section,
    markdown_report,
    phases_section,
    speech_section,
)
from expvid.construction.retries import CURRENT_EXPERIMENT, RetryBook
from expvid.construction.review import CSV_NAME, read_reviews
from expvid.construction.sources import SourceExperiment, discover_sources, missing_transcript
from expvid.construction.speech.sources import FilledSources, fill_transcripts, open_stage
from expvid.construction.state import STATE_DIR, BuildState, check_out_dir, write_atomic
from expvid.construction.writer import finalize, finalize_item, write_candidates
from expvid.media.errors import MediaError
from expvid.media.sampler import probe
from expvid.media.transcripts import TranscriptError, read_transcript
from expvid.models import ModelBackend, create_backend

Log = Callable[[str], None]
#: Stage notes worth a reviewer's attention (why segments or step times were not used, missing sections).
NOTE_KEYS = ("rejected_segments", "step_notes", "missing_sections", "transcript_windows")


def _load(
    source: SourceExperiment, digests: DigestCache | None = None, provenance: dict[str, Any] | None = None
) -> LoadedExperiment:
    experiment = LoadedExperiment(
        source=source, problems=list(source.problems), transcript_provenance=dict(provenance or {})
    )
    if digests is not None:
        experiment.load_digests(digests, video=False)
    if source.transcript is not None:
        try:
            experiment.transcript = read_transcript(source.transcript)
            if not experiment.transcript.cues:
                experiment.problems.append(f"{source.transcript}: the transcript has no cues")
        except TranscriptError as error:
            experiment.problems.append(str(error))
    if source.video is not None:
        try:
            experiment.info = probe(source.video)
        except MediaError as error:
            experiment.problems.append(str(error))
    return experiment


async def estimate_candidates(config: BuildConfig) -> dict[str, Any]:
    """`--dry-run`: read and probe the sources, plan every stage, estimate calls, tokens and cost.
    No model is asked and nothing is written (see `estimate.py`)."""
    from expvid.construction.estimate import estimate_build, placeholder_transcript
    from expvid.construction.retries import RetryBook
    from expvid.construction.speech.sources import plan_transcripts

    out = config.out.expanduser()
    check_out_dir(out)
    sources = discover_sources(config.sources)
    retries = RetryBook(out / STATE_DIR, retry_failed=config.retry_failed, read_only=True)
    retries.plan_redo(list(config.redo))
    speech = await asyncio.to_thread(plan_transcripts, sources, config.stt, out / STATE_DIR, retries.epochs)
    experiments = list(
        await asyncio.gather(
            *(asyncio.to_thread(_load, s, None, speech.provenance.get(s.video_id)) for s in speech.sources)
        )
    )
    for experiment in experiments:
        if experiment.video_id in speech.pending:  # not transcribed yet: planned with a stand-in
            missing = missing_transcript(experiment.source.folder)
            experiment.problems = [p for p in experiment.problems if p != missing]
            experiment.transcript = placeholder_transcript(speech.pending[experiment.video_id])
    return await estimate_build(config, experiments, speech, retries)


def _backends(config: BuildConfig, state: BuildState) -> dict[str, ModelBackend]:
    options = {"concurrency": config.concurrency, **config.backend_options, "cache_dir": state.cache_dir}
    backends = {"llm": create_backend(config.llm, **options)}
    if config.vlm:
        backends["vlm"] = create_backend(config.vlm, **options)
    if config.blind_samples and config.blind_llm and config.blind_llm != config.llm:
        backends["blind"] = create_backend(config.blind_llm, **options)
    return backends


async def build_candidates(
    config: BuildConfig, *, log: Log | None = None, progress: ProgressSink = NO_PROGRESS
) -> dict[str, Any]:
    """Run the whole pipeline; returns the build report (also written to `out/build_report.json`).

    With `config.review` it stops after curation and returns the curation part of the report
    (`report["stopped_after"] == "curation"`).
    """
    say = log or (lambda _message: None)
    started = time.monotonic()
    out = config.out.expanduser()
    check_out_dir(out)
    sources = discover_sources(config.sources)
    out.mkdir(parents=True, exist_ok=True)
    state = BuildState(out)
    retries = RetryBook(state.root, retry_failed=config.retry_failed)
    retries.redo(list(config.redo))
    state.epochs = retries.epochs
    ledger = Ledger(prices=config.effective_prices())
    digests = DigestCache(state.root)
    speech = open_stage(config.stt, state.root, concurrency=config.concurrency)
    backends = _backends(config, state)

    def client(backend: ModelBackend, role: str) -> LLMClient:
        return LLMClient(backend, role, config, ledger, retries)

    llm = client(backends["llm"], "llm")
    vlm = client(backends["vlm"], "vlm") if "vlm" in backends else None
    blind = client(backends.get("blind", backends["llm"]), "blind") if config.blind_samples else None
    context = BuildContext(
        config, llm=llm, vlm=vlm, blind=blind, ledger=ledger, state=state, progress=progress, speech=speech
    )
    if config.redo:
        say(f"redo: {', '.join(config.redo)} drafted again with fresh requests")
    try:
        return await _run(context, sources, say, started, digests)
    finally:
        digests.save()
        context.close()
        if speech is not None:
            await speech.aclose()
        for backend in backends.values():
            await backend.aclose()


async def _transcribe(context: BuildContext, sources: list[SourceExperiment], say: Log) -> FilledSources:
    """Transcripts for the experiments that have a video and none (see `speech/sources.py`)."""
    speech = context.speech
    wanted = sum(1 for s in sources if s.can_transcribe) if speech is not None else 0
    if wanted:
        context.progress.add("transcription", wanted)
        context.clock.start("transcription")
    filled = await fill_transcripts(
        sources, speech, context.state.epochs, done=lambda: context.progress.advance("transcription")
    )
    if wanted:
        context.clock.stop("transcription")
    for video_id, message in sorted(filled.failures.items()):
        context.speech_problems.append(
            Problem(video_id=video_id, stage="transcription", message=message, failed=True)
        )
    if speech is not None and wanted:
        ledger = speech.ledger
        say(
            f"speech-to-text: {ledger.transcribed} video(s) transcribed, {ledger.cache_hits} from the "
            f"transcript cache, {ledger.failures} failed"
        )
    return filled


async def _run(
    context: BuildContext, sources: list[SourceExperiment], say: Log, started: float, digests: DigestCache
) -> dict[str, Any]:
    config, out = context.config, context.out
    filled = await _transcribe(context, sources, say)
    experiments = list(
        await asyncio.gather(
            *(asyncio.to_thread(_load, s, digests, filled.provenance.get(s.video_id)) for s in filled.sources)
        )
    )
    say(f"{len(experiments)} experiment(s) found in {config.sources}")
    usable = [e for e in experiments if not e.problems]
    check_context(config, usable)  # before the first call: a window too small is a usage error
    context.progress.add("curation", len(usable))
    scored = dict(
        zip(
            [e.video_id for e in usable],
            await asyncio.gather(*(_score(context, e) for e in usable)),
            strict=True,
        )
    )
    review_path = out / CSV_NAME
    reviews = read_reviews(review_path)
    curation = decide(config.curation, experiments, scored, reviews)
    write_review_csv(review_path, curation, reviews)
    write_atomic(out / "curation_report.json", curation.model_dump_json(indent=1) + "\n")
    write_atomic(out / "curation_report.md", curation_markdown(curation))
    kept_ids = set(curation.kept)
    kept = [e for e in experiments if e.video_id in kept_ids]
    say(
        f"curation: kept {len(kept)}, rejected {len(experiments) - len(kept) - len(curation.videos_needed)}"
        + (f", {len(curation.videos_needed)} kept but without a video" if curation.videos_needed else "")
    )
    if config.review:
        return _stopped_after_curation(context, curation, scored, started, review_path, experiments)
    if kept:
        context.start_pool(len(kept))
    await asyncio.gather(*(asyncio.to_thread(e.load_digests, digests) for e in kept))
    for experiment in kept:
        assert experiment.source.video is not None
        await asyncio.to_thread(
            link_or_copy_if_missing, experiment.source.video, out / experiment.source_video_path
        )
    audit = AuditResult()
    outputs = await asyncio.gather(*(_experiment(context, e, say, audit) for e in kept))
    stage_outputs = [o for per in outputs for o in per]
    return await _finish(context, experiments, kept, curation, scored, stage_outputs, audit, started)


async def _score(context: BuildContext, experiment: LoadedExperiment) -> StageOutput:
    CURRENT_EXPERIMENT.set(experiment.video_id)  # this task's calls are this experiment's (`--redo X:ID`)
    return await score_transcript(context, experiment)


def _stopped_after_curation(
    context: BuildContext,
    curation: CurationReport,
    scored: dict[str, StageOutput],
    started: float,
    review_path: Path,
    experiments: list[LoadedExperiment],
) -> dict[str, Any]:
    """`--review`: the curation part of the report, for people to review `curation.csv`."""
    problems = [p for o in scored.values() for p in o.problems] + context.speech_problems
    speech = _speech_report(context, experiments)
    report: dict[str, Any] = {
        "format": 1,
        "stopped_after": "curation",
        "review_file": str(review_path),
        "seconds": round(time.monotonic() - started, 2),
        **context.ledger.as_dict(),
        "speech": speech,
        "curation": _curation_section(curation),
        "phases": phases_section(context),
        "problems": [p.model_dump() for p in problems],
        "failed_units": [p.model_dump() for p in problems if p.failed or p.transient],
    }
    add_speech_cost(report["cost"], speech)
    write_atomic(context.out / "build_report.json", json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return report


def _speech_report(context: BuildContext, experiments: list[LoadedExperiment]) -> dict[str, Any] | None:
    transcribed = [e.video_id for e in experiments if e.transcribed]
    return speech_section(context.speech, context.config.stt, transcribed)


def _curation_section(curation: CurationReport) -> dict[str, Any]:
    return {
        "kept": curation.kept,
        "rejected": {e.video_id: e.reasons for e in curation.entries if not e.kept and not e.needs_video},
        "videos_needed": curation.videos_needed,
        "reviewed": {e.video_id: e.review for e in curation.entries if e.review},
        "duration_rule": curation.duration_rule,
        "warnings": curation.warnings,
    }


def _add_run(state: BuildState, report: dict[str, Any]) -> None:
    """Append this run to `.build/runs.jsonl` and total the finished runs into `report["cost"]`.

    A run killed before this point is not in the file: its answered calls were cached, and the next
    run counts those it uses as cached replies.
    """
    path = state.root / "runs.jsonl"
    runs = (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []
    )
    this = {
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sent": report["calls"]["sent"],
        "prompt_tokens": report["tokens"]["prompt"],
        "completion_tokens": report["tokens"]["completion"],
        "cost": report["cost"]["this_run"],
    }
    runs.append(this)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(this) + "\n")
    costs = [run["cost"] for run in runs]
    report["cost"]["runs"] = len(runs)
    report["cost"]["all_runs"] = None if any(c is None for c in costs) else round(sum(costs), 6)
    report["calls"]["sent_all_runs"] = sum(run["sent"] for run in runs)


def link_or_copy_if_missing(source: Path, target: Path) -> None:
    if not target.is_file() or target.stat().st_size != source.stat().st_size:
        link_or_copy(source, target)


def _domain_audit(
    experiments: list[LoadedExperiment], outputs: list[StageOutput], items: list[Any], audit: AuditResult
) -> None:
    """Each experiment's vocabulary (transcript, title, paper, its items' correct answers), for judging
    its distractors against it and its discipline (`domain.py`)."""
    vocabulary = DomainVocabulary()
    papers = {o.video_id: o.paper_markdown or "" for o in outputs if o.paper_markdown}
    answers: dict[str, list[str]] = {}
    for item in items:
        if item.options and item.answer_type.value == "choice":
            answers.setdefault(str(item.meta.get("video_id")), []).append(item.options[str(item.answer)])
    for experiment in experiments:
        source = experiment.source
        texts = [source.title, source.discipline, papers.get(source.video_id, "")]
        if experiment.transcript is not None:
            texts += [cue.text for cue in experiment.transcript.cues]
        vocabulary.add(source.video_id, source.discipline, [*texts, *answers.get(source.video_id, [])])
    implausible_distractors(items, audit, vocabulary, everyday_words())


def clips_section(context: BuildContext) -> dict[str, Any]:
    """Clip cutting: worker processes and threads, one decode pass per video, seconds spent.

    No speed-up is claimed here: summed worker seconds over wall time is not one (workers sharing
    too few cores each take longer). The wall-time ratio of `--jobs N` against `--jobs 1` is measured
    by benchmarks/build_clips.py, which ran the set-ups the defaults were chosen from.
    """
    stats = context.cut_stats
    wall = context.clock.seconds().get("clips", 0.0)
    return {
        "jobs": stats.jobs,
        "encoder_threads": stats.threads,
        "decoder_threads": context.decode_threads,
        "videos": stats.videos,
        "clips_cut": stats.clips_cut,
        "clips_reused": stats.clips_reused,
        "worker_seconds": round(stats.worker_seconds, 3),
        "wall_seconds": wall,
        "decoded_frames": stats.decoded_frames,
        "video_frames": stats.video_frames,
        "decode_passes": round(stats.decoded_frames / stats.video_frames, 3) if stats.video_frames else None,
        "per_video": stats.per_video,
    }


async def _guard(stage: str, experiment: LoadedExperiment, run: Awaitable[StageOutput]) -> StageOutput:
    """A media failure (unreadable frames while captioning) costs the stage, not the build."""
    try:
        return await run
    except MediaError as error:
        output = StageOutput(video_id=experiment.video_id, stage=stage)
        output.problem(f"media: {error}", failed=True)
        return output


def clip_specs(outputs: list[StageOutput]) -> set[ClipSpec]:
    specs = {item.clip for o in outputs for item in o.items}
    specs |= {o.level3_clip for o in outputs if o.level3_clip is not None}
    return specs


async def _experiment(
    context: BuildContext, experiment: LoadedExperiment, say: Log, audit: AuditResult
) -> list[StageOutput]:
    """One experiment's stages, each stage's blind audit as soon as its items exist (while the other
    stages and experiments are drafted), then its clips from one decode pass."""
    CURRENT_EXPERIMENT.set(experiment.video_id)  # this task's calls are this experiment's (`--redo X:ID`)
    levels = context.config.levels
    blind: list[asyncio.Task[None]] = []

    async def stage(name: str, run: Awaitable[StageOutput]) -> StageOutput:
        output = await _guard(name, experiment, run)
        if output.items:
            blind.append(asyncio.create_task(_blind(context, output, audit)))
        return output

    first: list[Awaitable[StageOutput]] = []
    if 1 in levels:
        first.append(stage("level1", run_level1(context, experiment)))
    if 2 in levels:
        first.append(stage("level2", run_level2(context, experiment)))
    outputs = list(await asyncio.gather(*first))
    if 3 in levels:
        level2 = next((o for o in outputs if o.stage == "level2"), None)
        outputs.append(await stage("level3", run_level3(context, experiment, level2)))
    problem = await context.cut_experiment(experiment, clip_specs(outputs))
    if problem is not None:
        # The drafts are kept (their stages are saved); items whose clip is missing are left out of
        # this run's files (`_finish`) and the next run cuts the missing clips again.
        clips = StageOutput(video_id=experiment.video_id, stage="clips")
        clips.problem(problem, failed=True)
        outputs.append(clips)
    await asyncio.gather(*blind)
    counts = Counter(item.task for o in outputs for item in o.items)
    say(f"{experiment.video_id}: {sum(counts.values())} draft item(s)")
    return outputs


async def _blind(context: BuildContext, output: StageOutput, audit: AuditResult) -> None:
    """The blind audit of one stage's items, finalized on their own (ids and letters do not depend on
    any other item, so these are the very prompts the written items will have)."""
    finals: dict[str, Any] = {}
    for draft in output.items:
        final = finalize_item(draft, context.config.seed)
        finals.setdefault(final.key, final)
    await blind_audit(context, [f.item for f in finals.values()], audit)


async def _finish(
    context: BuildContext,
    experiments: list[LoadedExperiment],
    kept: list[LoadedExperiment],
    curation: CurationReport,
    scored: dict[str, StageOutput],
    outputs: list[StageOutput],
    audit: AuditResult,
    started: float,
) -> dict[str, Any]:
    config, out = context.config, context.out
    present = {spec.path for spec in clip_specs(outputs) if (out / spec.path).is_file()}
    drafts = [item for o in outputs for item in o.items if item.clip.path in present]
    duplicates: dict[str, dict[str, int]] = {}
    finals = finalize(drafts, [e.video_id for e in kept], config.seed, duplicates)
    items = [f.item for f in finals]
    text_checks(items, audit)
    balance = balance_report(items)
    position_flags(items, balance, audit, drawn=frozenset(f.draft.task for f in finals if f.draft.balanced))
    ordering_shortcuts(items, audit)
    if config.asr_audit:
        asr_leakage(items, audit)
    written = {f.key for f in finals}
    audit.flags = {key: flags for key, flags in audit.flags.items() if key in written}
    if config.domain_audit and any(i.task in PHRASE_TASKS for i in items):
        await asyncio.to_thread(_domain_audit, experiments, outputs, items, audit)

    by_id = {e.video_id: e for e in kept}
    entries = curation.by_id()
    level3 = {o.video_id: o for o in outputs if o.stage == "level3"}
    experiment_rows = []
    for experiment in kept:
        entry = entries[experiment.video_id]
        l3 = level3.get(experiment.video_id)
        full = l3.level3_clip.path if l3 is not None and l3.level3_clip is not None else None
        full = full if full in present else None
        row: dict[str, Any] = {
            "video_id": experiment.video_id,
            "title": experiment.source.title,
            "discipline": experiment.source.discipline,
            "duration": entry.duration,
            "full_video": full,
            "source_video": experiment.source_video_path,
            "curation": {"scores": entry.scores, "mean": entry.mean, "rank": entry.rank},
            "transcript": experiment.transcript_provenance,
        }
        if experiment.transcribed:
            row["transcript_file"] = f"transcripts/{experiment.video_id}.json"
        experiment_rows.append(row)
    papers = {o.video_id: o.paper_markdown for o in outputs if o.paper_markdown}
    segments = [s for o in outputs for s in o.segments]
    write_candidates(
        out,
        finals,
        flags=audit.flags,
        segments=segments,
        experiments=experiment_rows,
        papers=papers,
        source_videos={vid: e.source_video_path for vid, e in by_id.items()},
        transcripts={vid: e.transcript_provenance for vid, e in by_id.items()},
        transcribed={
            vid: e.source.transcript for vid, e in by_id.items() if e.transcribed and e.source.transcript
        },
    )
    dropped: dict[str, dict[str, int]] = {task: dict(reasons) for task, reasons in duplicates.items()}
    for output in outputs:
        for task, reasons in output.dropped.items():
            for reason, count in reasons.items():
                dropped.setdefault(task, {}).setdefault(reason, 0)
                dropped[task][reason] += count
    problems: list[Problem] = [p for o in [*scored.values(), *outputs] for p in o.problems]
    problems += audit.problems + context.speech_problems
    speech = _speech_report(context, experiments)
    per_task = Counter(f.draft.task for f in finals)
    report: dict[str, Any] = {
        "format": 1,
        "sources": str(config.sources),
        "out": str(out),
        "seconds": round(time.monotonic() - started, 2),
        "models": {
            "llm": config.llm,
            "vlm": config.vlm,
            "blind": (config.blind_llm or config.llm) if config.blind_samples else None,
        },
        "settings": config.model_dump(mode="json", exclude={"sources", "out", "backend_options", "prices"}),
        **context.ledger.as_dict(),
        "speech": speech,
        "curation": _curation_section(curation),
        "items": items_section(per_task, dropped),
        "total_items": len(finals),
        "flags": flags_section(audit.flags),
        "flagged_items": sum(1 for f in finals if audit.flags.get(f.key) or f.draft.flags),
        "balance": balance,
        "level3_video": {o.video_id: o.notes.get("trim", "") for o in outputs if o.stage == "level3"},
        "stages": {
            "reused": context.state.reused,
            "computed": context.state.saved,
            "clips_cut": context.clips_cut,
            "clips_reused": context.clips_reused,
        },
        "phases": phases_section(context),
        "clips": clips_section(context),
        "problems": [p.model_dump() for p in problems],
        "failed_units": [p.model_dump() for p in problems if p.failed or p.transient],
        "notes": {
            f"{o.video_id}/{o.stage}": {k: o.notes[k] for k in NOTE_KEYS if o.notes.get(k)}
            for o in outputs
            if any(o.notes.get(k) for k in NOTE_KEYS)
        },
        "ordering_solvers": audit.ordering_solvers,
        "audit_notes": audit.notes,
    }
    add_speech_cost(report["cost"], speech)
    _add_run(context.state, report)
    record_usage(context.state.root, report["calls"]["by_stage"])
    write_atomic(out / "build_report.json", json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    write_atomic(out / "build_report.md", markdown_report(report))
    return report
