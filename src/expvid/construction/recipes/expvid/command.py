"""`expvid build SOURCES --out DIR --llm SPEC` (the default recipe): ExpVid's construction, sections 3.1-3.3
and appendix G, with its settings as `expvid build`'s own flags and speech-to-text as `-R stt...`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from pydantic import ValidationError

from expvid.commands.endpoints import endpoint_options
from expvid.commands.errors import friendly_errors, require_spec_urls
from expvid.construction.progress_bars import build_progress
from expvid.recipes.api import BuiltRelease
from expvid.run.terminal import message_console

console = message_console(stderr=True)


def build_expvid(
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
    from expvid.construction import (
        BuildConfig,
        CurationSettings,
        build_candidates,
        estimate_candidates,
    )
    from expvid.construction.config import RELEASE_SUITE
    from expvid.construction.recipes.build_flags import prices_of, redo_of
    from expvid.construction.recipes.speech_options import STT_KEYS, recipe_options, stt_settings

    # The expvid recipe's own settings are flags; -R carries only speech-to-text (the speech options every recipe shares).
    stt = stt_settings(recipe_options(recipe_option or [], STT_KEYS))
    prices = prices_of(price)
    try:
        level_numbers = tuple(int(part) for part in levels.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated level numbers, got {levels!r}", param_hint="--levels"
        ) from None
    require_spec_urls("--llm", llm)
    require_spec_urls("--vlm", vlm)
    require_spec_urls("--blind-llm", blind_llm)
    redo_stages = redo_of(redo)
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
