"""`expvid eval`: evaluate one model on a suite and write a resumable run directory."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from expvid.run.config import EvalConfig, parse_frame_counts
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.suites.protocol import FrameOptions, PromptOptions
from expvid.suites.registry import get_suite

console = Console(stderr=True)


def eval_command(
    data: Annotated[
        Path, typer.Option("--data", help="Dataset root (ExpVid release layout, or a suite's files).")
    ],
    model: Annotated[
        str, typer.Option("--model", help="Model spec: openai:MODEL[@URL], random, blind:SPEC, ...")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Run directory (created; re-run the same command to resume).")
    ],
    suite: Annotated[str, typer.Option("--suite", help="Benchmark suite.")] = "expvid",
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Comma-separated task names (default: all).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N items per task.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight.")] = 8,
    frames: Annotated[
        str | None,
        typer.Option("--frames", help="Frames per level or task, e.g. L1=8,L2=32,L3=128 (F.2 defaults)."),
    ] = None,
    fps: Annotated[
        float | None, typer.Option("--fps", help="Sample at this rate instead of N frames.")
    ] = None,
    max_frames: Annotated[int | None, typer.Option("--max-frames", help="Cap for --fps sampling.")] = None,
    size: Annotated[
        int, typer.Option("--size", help="Square frame side (F.2: 224); 0 keeps the source size.")
    ] = 224,
    max_images: Annotated[
        int | None, typer.Option("--max-images", help="API cap on images per request.")
    ] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Default: the paper's (0.1).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Default: the paper's (8192).")
    ] = None,
    with_asr: Annotated[
        bool, typer.Option("--with-asr", help="Ablation: add the narration to the prompt.")
    ] = False,
    judge: Annotated[
        str | None, typer.Option("--judge", help="LLM judge spec for Level 3 (default: the offline judge).")
    ] = None,
    judge_base_url: Annotated[str | None, typer.Option("--judge-base-url")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option("--judge-api-key-env")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="Env var holding the API key.")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per request.")] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Frame and response cache (default ~/.cache/expvid).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Disable frame and response caches.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on any malformed data line.")] = False,
    no_retry_failed: Annotated[
        bool, typer.Option("--no-retry-failed", help="On resume, keep failed items failed.")
    ] = False,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Evaluate MODEL on a benchmark; writes manifest.json, predictions.jsonl, judgments.jsonl, scores.json."""
    from expvid.run.evaluate import evaluate

    try:
        counts = parse_frame_counts(frames) if frames else {}
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    backend_options: dict[str, object] = {}
    if base_url:
        backend_options["base_url"] = base_url
    if api_key_env:
        backend_options["api_key_env"] = api_key_env
    if timeout:
        backend_options["timeout_s"] = timeout
    config = EvalConfig(
        suite=suite,
        data=data,
        model=model,
        out=out,
        tasks=[t.strip() for t in tasks.split(",") if t.strip()] if tasks else None,
        limit=limit,
        concurrency=concurrency,
        frames=FrameOptions(
            counts=counts, fps=fps, max_frames=max_frames, size=size or None, max_images=max_images
        ),
        prompt=PromptOptions(with_asr=with_asr),
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        judge=judge,
        judge_base_url=judge_base_url,
        judge_api_key_env=judge_api_key_env,
        backend_options=backend_options,
        cache_dir=None if no_cache else (cache_dir or default_cache_root()),
        strict=strict,
        retry_failed=not no_retry_failed,
    )
    try:
        result = asyncio.run(evaluate(config, command=sys.argv, console=console, show_progress=not quiet))
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/]: finished items are saved in {out}; re-run the same command to resume"
        )
        raise typer.Exit(code=130) from None
    table = build_table(get_suite(suite), load_runs([out]), references=[])
    typer.echo(to_markdown(table))
    console.print(
        f"{result.generated} item(s) run, {result.resumed} reused from the run directory, "
        f"{result.failed} failed; scores in {result.rundir.scores_path}"
    )


def default_cache_root() -> Path:
    from expvid.media.cache import default_cache_dir

    return default_cache_dir()
