"""`expvid build SOURCES_DIR --out CANDIDATES_DIR --llm SPEC [--vlm SPEC]`: draft a candidate benchmark."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from expvid.cli.errors import friendly_errors, require_http_urls
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
        bool, typer.Option("--no-asr-audit", help="Skip the MiniLM ASR-leakage audit.")
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
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="Env var holding the API key.")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per request.")] = None,
    max_retries: Annotated[
        int | None, typer.Option("--max-retries", help="HTTP retries per request.")
    ] = None,
    preset: Annotated[str, typer.Option("--preset", help="x264 preset for clips.")] = "veryfast",
    levels: Annotated[str, typer.Option("--levels", help="Levels to draft, e.g. 1,2,3 or 2.")] = "1,2,3",
    seed: Annotated[int, typer.Option("--seed")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress messages.")] = False,
) -> None:
    """Curate experiments and draft Level-1/2/3 candidate items with leakage audits (ExpVid 3.1-3.3, G)."""
    from expvid.build import BuildConfig, CurationSettings, build_candidates, parse_price

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
    require_http_urls("--base-url", base_url)
    backend_options: dict[str, object] = {}
    if base_url:
        backend_options["base_url"] = base_url
    if api_key_env:
        backend_options["api_key_env"] = api_key_env
    if timeout:
        backend_options["timeout_s"] = timeout
    if max_retries is not None:
        backend_options["max_retries"] = max_retries
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

    with friendly_errors():
        report = asyncio.run(build_candidates(config, log=log))
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
