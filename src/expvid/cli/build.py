"""`expvid build SOURCES_DIR --out CANDIDATES_DIR --llm SPEC [--vlm SPEC]`: draft a candidate benchmark."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from expvid.cli.build_gate import BuiltRelease
from expvid.cli.endpoints import (
    ApiKeyEnvOption,
    BackendOptionOption,
    BaseUrlOption,
    MaxRetriesOption,
    TimeoutOption,
    endpoint_options,
)
from expvid.cli.errors import friendly_errors, require_spec_urls
from expvid.run.terminal import message_console

console = message_console(stderr=True)


def build_command(
    sources: Annotated[
        Path,
        typer.Argument(
            help="Folder of experiments: <id>/{video, transcript, paper, meta.json}.",
            show_default=False,
            metavar="SOURCES_DIR",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Candidate directory (created; re-run to resume).")],
    llm: Annotated[
        str, typer.Option("--llm", help="Drafting model spec, e.g. openai:deepseek-r1@http://host/v1.")
    ],
    vlm: Annotated[
        str | None,
        typer.Option("--vlm", help="Optional captioner for Level-1 clips (the paper's Qwen caption)."),
    ] = None,
    blind_llm: Annotated[
        str | None, typer.Option("--blind-llm", help="Text-only model of the blind audit (default: --llm).")
    ] = None,
    blind_samples: Annotated[
        int, typer.Option("--blind-samples", min=0, help="Blind answers per item; 0 turns the audit off.")
    ] = 3,
    blind_margin: Annotated[
        float, typer.Option("--blind-margin", help="Flag items whose blind score beats chance by this much.")
    ] = 0.25,
    vlm_frames: Annotated[
        int, typer.Option("--vlm-frames", min=1, help="Frames per clip sent to the VLM.")
    ] = 8,
    min_alignment: Annotated[
        int,
        typer.Option(
            "--min-alignment", min=1, max=5, help="G.1.6 score needed for an operation MCQ (with --vlm)."
        ),
    ] = 3,
    no_asr_audit: Annotated[
        bool, typer.Option("--no-asr-audit", help="Skip the narration-leakage audit.")
    ] = False,
    no_domain_audit: Annotated[
        bool, typer.Option("--no-domain-audit", help="Skip the out-of-domain distractor audit.")
    ] = False,
    no_ordering_repair: Annotated[
        bool,
        typer.Option(
            "--no-ordering-repair",
            help="Keep the model's step-ordering distractors even when the option set gives the order away.",
        ),
    ] = False,
    top_k: Annotated[
        int, typer.Option("--top-k", min=1, help="Experiments kept per discipline (paper: 30).")
    ] = 30,
    min_duration: Annotated[
        float | None,
        typer.Option("--min-duration", help="Seconds; with --max-duration replaces the IQR rule."),
    ] = None,
    max_duration: Annotated[float | None, typer.Option("--max-duration", help="Seconds.")] = None,
    trim_slides: Annotated[
        bool, typer.Option("--trim-slides", help="Cut Level-3 videos after the last procedural step.")
    ] = False,
    level3_questions: Annotated[int, typer.Option("--level3-questions", min=1, help="Drafts per type.")] = 2,
    targets_per_sentence: Annotated[int, typer.Option("--targets-per-sentence", min=1)] = 1,
    tolerance: Annotated[
        float,
        typer.Option("--timestamp-tolerance", help="Snap model times within this many s of a cue boundary."),
    ] = 0.5,
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", min=1, help="Requests per call, retries included.")
    ] = 3,
    temperature: Annotated[float, typer.Option("--temperature")] = 0.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 8192,
    price: Annotated[
        list[str] | None,
        typer.Option(
            "--price", help="USD per 1M tokens: [ROLE=]IN,OUT, ROLE in llm, vlm, blind. Repeatable."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Model requests in flight.")] = 8,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    timeout: TimeoutOption = None,
    max_retries: MaxRetriesOption = None,
    backend_option: BackendOptionOption = None,
    preset: Annotated[str, typer.Option("--preset", help="x264 preset for clips.")] = "veryfast",
    levels: Annotated[str, typer.Option("--levels", help="Levels to draft, e.g. 1,2,3 or 2.")] = "1,2,3",
    seed: Annotated[int, typer.Option("--seed")] = 0,
    context_tokens: Annotated[
        int,
        typer.Option(
            "--context-tokens",
            min=2048,
            help="The model's context window; long transcripts are split to fit.",
        ),
    ] = 32768,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            min=1,
            help="Processes cutting clips (default: 1 on up to 2 cores, else one per 2 cores).",
        ),
    ] = None,
    redo: Annotated[
        str | None,
        typer.Option(
            "--redo",
            help="Draft again with fresh requests: STAGE or STAGE:EXPERIMENT_ID, comma-separated; stages: "
            "transcription, curation, level1, level2, level3, blind_audit (scivideobench: transcription, "
            "generator, evaluator, comparer, refiner, blind).",
        ),
    ] = None,
    redo_failed: Annotated[
        bool,
        typer.Option(
            "--redo-failed/--keep-failed",
            help="Ask failed units again (default), or replay their cached replies at no cost.",
        ),
    ] = True,
    review: Annotated[
        bool,
        typer.Option(
            "--review", help="Stop after curation: edit curation.csv, then run again without --review."
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Plan and estimate calls, tokens and cost per stage; ask no model."),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress messages.")] = False,
    recipe: Annotated[
        str,
        typer.Option(
            "--recipe", help="Which paper's construction: expvid (default), scivideobench or promqa."
        ),
    ] = "expvid",
    recipe_option: Annotated[
        list[str] | None,
        typer.Option(
            "-R",
            "--recipe-option",
            help="KEY=VALUE setting. Speech-to-text for videos without a transcript, expvid and scivideobench "
            "recipes: stt=faster-whisper:MODEL|openai:MODEL@URL, stt_price (USD/min), stt_language, "
            "stt_api_key_env, stt_beam_size. --recipe scivideobench also: per_type=conceptual:2,..., exemplars, "
            "prompts, frames, frame_max_side, paper_chars, noise, generator=frames|video|text, disciplines "
            "(docs/scivideobench-recipe.md); --recipe promqa: "
            "template, generator, next, missing, others, count.TYPE, ... (docs/build_promqa.md). Repeatable.",
        ),
    ] = None,
    accept_audit: Annotated[
        Path | None,
        typer.Option(
            "--accept-audit",
            help="Reviewed exceptions to the audit gate: a YAML/JSON list of {solver, task, reason} "
            "(docs/audit.md, 'The release gate'); each must match a flagged solver.",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Curate experiments and draft Level-1/2/3 candidate items with leakage audits (ExpVid 3.1-3.3, G).

    Every recipe's release then passes the audit gate (audit.json/md/html beside build_report.json).
    Exits 1 when units failed (listed in build_report.md; the next run asks exactly those again),
    2 on bad input, 6 when the release is written but a text-only solver beats chance on it and
    --accept-audit does not accept it.
    """
    values = dict(locals())
    from expvid.cli.build_gate import finish_build, read_accepted

    exceptions = read_accepted(accept_audit)
    built: BuiltRelease | None
    if recipe == "scivideobench":
        from expvid.cli.build_scivideobench import run_scivideobench

        built = run_scivideobench(values)
    elif recipe == "promqa":
        from expvid.cli.build_promqa import run_promqa

        built = run_promqa(values)
    elif recipe == "expvid":
        built = _build_expvid(**{k: v for k, v in values.items() if k != "accept_audit"})
    else:
        raise typer.BadParameter(
            f"unknown recipe {recipe!r}; recipes: expvid, scivideobench, promqa", param_hint="--recipe"
        )
    finish_build(built, accept_audit=accept_audit, exceptions=exceptions, quiet=quiet)


def _build_expvid(
    *,
    sources: Path,
    out: Path,
    llm: str,
    vlm: str | None,
    blind_llm: str | None,
    blind_samples: int,
    blind_margin: float,
    vlm_frames: int,
    min_alignment: int,
    no_asr_audit: bool,
    no_domain_audit: bool,
    no_ordering_repair: bool,
    top_k: int,
    min_duration: float | None,
    max_duration: float | None,
    trim_slides: bool,
    level3_questions: int,
    targets_per_sentence: int,
    tolerance: float,
    max_attempts: int,
    temperature: float,
    max_tokens: int,
    price: list[str] | None,
    concurrency: int,
    base_url: list[str] | None,
    api_key_env: str | None,
    timeout: float | None,
    max_retries: int | None,
    backend_option: list[str] | None,
    preset: str,
    levels: str,
    seed: int,
    context_tokens: int,
    jobs: int | None,
    redo: str | None,
    redo_failed: bool,
    review: bool,
    dry_run: bool,
    quiet: bool,
    recipe: str,
    recipe_option: list[str] | None,
) -> BuiltRelease | None:
    """The ExpVid recipe (sections 3.1-3.3, appendix G)."""
    from expvid.cli.build_speech import STT_KEYS, recipe_options, stt_settings
    from expvid.construction import (
        BuildConfig,
        CurationSettings,
        build_candidates,
        estimate_candidates,
        parse_price,
    )
    from expvid.construction.config import RELEASE_SUITE
    from expvid.construction.retries import redo_problem

    # The expvid recipe's own settings are flags; -R carries only speech-to-text (shared with scivideobench).
    stt = stt_settings(recipe_options(recipe_option or [], STT_KEYS))
    prices = {}
    for text in price or []:
        try:
            roles, value = parse_price(text)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--price") from None
        prices.update(dict.fromkeys(roles, value))
    try:
        level_numbers = tuple(int(part) for part in levels.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated level numbers, got {levels!r}", param_hint="--levels"
        ) from None
    require_spec_urls("--llm", llm)
    require_spec_urls("--vlm", vlm)
    require_spec_urls("--blind-llm", blind_llm)
    redo_stages = tuple(part.strip() for part in (redo or "").split(",") if part.strip())
    for entry in redo_stages:
        problem = redo_problem(entry)
        if problem is not None:
            raise typer.BadParameter(problem, param_hint="--redo")
    backend_options = endpoint_options(base_url, api_key_env, timeout, max_retries, backend_option)
    try:
        config = BuildConfig(
            sources=sources,
            out=out,
            llm=llm,
            vlm=vlm,
            blind_llm=blind_llm,
            blind_samples=blind_samples,
            blind_margin=blind_margin,
            vlm_frames=vlm_frames,
            min_alignment=min_alignment,
            asr_audit=not no_asr_audit,
            domain_audit=not no_domain_audit,
            repair_ordering=not no_ordering_repair,
            context_tokens=context_tokens,
            jobs=jobs,
            redo=redo_stages,
            retry_failed=redo_failed,
            stt=stt,
            review=review,
            curation=CurationSettings(top_k=top_k, min_duration=min_duration, max_duration=max_duration),
            trim_slides=trim_slides,
            level3_questions=level3_questions,
            targets_per_sentence=targets_per_sentence,
            timestamp_tolerance=tolerance,
            max_attempts=max_attempts,
            temperature=temperature,
            max_tokens=max_tokens,
            prices=prices,
            concurrency=concurrency,
            backend_options=backend_options,
            preset=preset,
            seed=seed,
            levels=level_numbers,
        )
    except ValidationError as error:
        raise typer.BadParameter(str(error)) from None

    def log(message: str) -> None:
        if not quiet:
            console.print(message, markup=False)

    if dry_run:
        from expvid.construction.estimate import estimate_markdown

        with friendly_errors():
            estimate = asyncio.run(estimate_candidates(config))
        typer.echo(estimate_markdown(estimate), nl=False)
        return None
    with friendly_errors(), build_progress(console, enabled=not quiet) as progress:
        report = asyncio.run(build_candidates(config, log=log, progress=progress))
    if report.get("stopped_after") == "curation":
        kept = report["curation"]["kept"]
        console.print(
            f"stopped after curation for review: {len(kept)} experiment(s) kept. Edit the 'review' column of "
            f"{report['review_file']} (keep / exclude), then run the same command without --review.",
            highlight=False,
        )
        return None
    calls, cost = report["calls"], report["cost"]
    spent = "unknown" if cost["this_run"] is None else f"${cost['this_run']:.4f}"
    summary = ", ".join(f"{task} {entry['kept']}" for task, entry in report["items"].items() if entry["kept"])
    console.print(
        f"{report['total_items']} candidate item(s) in {out} ({summary}); {report['flagged_items']} flagged; "
        f"{calls['sent']} model call(s) sent, {calls['cache_hits']} from the cache, {calls['failures']} failed; "
        f"est. cost {spent}; "
        f"{len(report['problems'])} problem(s): see {out / 'build_report.md'}",
        markup=False,
    )
    needed = report["curation"].get("videos_needed") or []
    if needed:
        console.print(
            f"kept without a video on disk (add them, run again): {', '.join(needed)}", highlight=False
        )
    failed = report.get("failed_units") or []
    if failed:
        console.print(
            f"{len(failed)} unit(s) failed; everything else is written. Run the same command again to retry "
            "exactly those (see 'Failed units' in build_report.md).",
            highlight=False,
        )
    return BuiltRelease(
        out=out, suite=RELEASE_SUITE, failed_units=len(failed), released=int(report["total_items"])
    )


class _RichProgress:
    """Progress bars per build stage (count, rate, ETA) on stderr; a stage's bar appears with its first unit."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}

    def _task(self, phase: str) -> Any:
        if phase not in self.tasks:
            self.tasks[phase] = self.progress.add_task(phase, total=0)
        return self.tasks[phase]

    def add(self, phase: str, total: int) -> None:
        task = self._task(phase)
        current = self.progress.tasks[self.tasks[phase]].total or 0
        self.progress.update(task, total=current + total)

    def advance(self, phase: str, done: int = 1) -> None:
        self.progress.advance(self._task(phase), done)


@contextmanager
def build_progress(console: Console, *, enabled: bool) -> Iterator[Any]:
    """Rich progress bars (stage, bar, done/total, units per second, elapsed, ETA), or nothing."""
    from expvid.construction.progress import NO_PROGRESS

    if not enabled:
        yield NO_PROGRESS
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("-/s" if speed is None else f"{speed:.1f}/s")

    columns = (
        TextColumn("{task.description:<11}"),
        BarColumn(bar_width=None),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, refresh_per_second=4) as progress:
        yield _RichProgress(progress)
