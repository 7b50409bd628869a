"""`expvid eval`: evaluate one model on a suite and write a resumable run directory."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from expvid.cli.errors import (
    EXIT_INTERRUPTED,
    EXIT_ITEMS_FAILED,
    friendly_errors,
    require_http_urls,
    require_spec_urls,
)
from expvid.models.types import ThinkingConfig
from expvid.run.batch_settings import BatchSettings
from expvid.run.config import JUDGE_INPUTS, EvalConfig, parse_frame_counts, parse_key_values
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.run.terminal import message_console
from expvid.suites.protocol import FrameOptions, PromptOptions, resolution_given
from expvid.suites.registry import get_suite

console = message_console(stderr=True)


def eval_command(
    data: Annotated[
        str,
        typer.Option(
            "--data",
            help="Dataset root (ExpVid release layout, or a suite's files), or hf:ORG/NAME[@REV] to fetch it first.",
        ),
    ],
    model: Annotated[
        str, typer.Option("--model", help="Model spec: openai:MODEL[@URL], random, blind:SPEC, ...")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Run directory (created; re-run the same command to resume).")
    ],
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite", help="Benchmark suite (default: expvid, or the suite whose hf: release --data names)."
        ),
    ] = None,
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
        int | None,
        typer.Option(
            "--size",
            min=0,
            help="Square frame side (ExpVid F.2: 224); 0 keeps the source size. Default: the paper's.",
        ),
    ] = None,
    max_side: Annotated[
        int | None,
        typer.Option(
            "--max-side", min=0, help="Keep the aspect ratio, longest side at most N px (0: source size)."
        ),
    ] = None,
    max_images: Annotated[
        int | None, typer.Option("--max-images", help="API cap on images per request.")
    ] = None,
    input_mode: Annotated[
        str,
        typer.Option(
            "--input-mode",
            help="Frames as independent 'images' (F.2, every backend) or one 'video' (vLLM, hf:).",
        ),
    ] = "images",
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
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--base-url", help="OpenAI-compatible server URL; repeat to spread requests over several."
        ),
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="Env var holding the API key.")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per request.")] = None,
    thinking: Annotated[
        bool | None, typer.Option("--thinking/--no-thinking", help="Reasoning switch, where supported.")
    ] = None,
    thinking_budget: Annotated[
        int | None, typer.Option("--thinking-budget", min=0, help="Reasoning token budget (0 = off).")
    ] = None,
    tensor_parallel_size: Annotated[
        int | None, typer.Option("--tensor-parallel-size", min=1, help="vllm:PATH: GPUs per model.")
    ] = None,
    vllm_args: Annotated[
        str | None,
        typer.Option(
            "--vllm-args", help='vllm:PATH: extra `vllm serve` arguments, e.g. "--max-model-len 32768".'
        ),
    ] = None,
    backend_option: Annotated[
        list[str] | None,
        typer.Option(
            "--backend-option", help="Backend setting KEY=VALUE (VALUE read as JSON when it parses)."
        ),
    ] = None,
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
    samples: Annotated[
        int, typer.Option("--samples", min=1, help="Samples per item for pass@k (sample s uses seed + s).")
    ] = 1,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant", help="Prompt variant KEY[=VALUE], e.g. cot, post_prompt=gpt4v (SciVideoBench)."
        ),
    ] = None,
    keep_times: Annotated[
        bool, typer.Option("--keep-times", help="SciVideoBench: keep mm:ss times instead of 'frame N'.")
    ] = False,
    frame_preset: Annotated[
        str | None,
        typer.Option(
            "--frame-preset", help="A paper's per-model frame setting, e.g. gemini, gpt-4o, qwen2.5-vl."
        ),
    ] = None,
    language: Annotated[
        str | None, typer.Option("--language", help="SFE: en, zh or both (default en).")
    ] = None,
    bertscore: Annotated[
        str | None,
        typer.Option("--bertscore", help="SFE: auto, official, minilm or PATH:LAYER (default auto)."),
    ] = None,
    suite_option: Annotated[
        list[str] | None,
        typer.Option("--suite-option", help="Suite setting KEY=VALUE (e.g. levels=FILE for SFE)."),
    ] = None,
    human_judgments: Annotated[
        Path | None,
        typer.Option(
            "--human-judgments", help="ProMQA: JSONL of human 0/1/2 judgements to check the judge against."
        ),
    ] = None,
    judge_input: Annotated[
        str | None,
        typer.Option(
            "--judge-input",
            help="ProMQA/SFE: raw (the reply as the official code sends it) or stripped (think blocks removed).",
        ),
    ] = None,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures",
            help="Exit 0 even when records scored 0 without a model answer (failed items, invalid records).",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print requests, images, tokens and cost per task; send and write nothing."
        ),
    ] = False,
    price: Annotated[
        list[str] | None,
        typer.Option(
            "--price", help="USD per 1M tokens: [MODEL=]IN,OUT (default: the price table). Repeatable."
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", min=0, help="Stop cleanly before the run's spend passes this many USD."),
    ] = None,
    max_tokens_total: Annotated[
        int | None,
        typer.Option("--max-tokens-total", min=1, help="Stop cleanly before the run's tokens pass N."),
    ] = None,
    api: Annotated[
        str | None,
        typer.Option(
            "--api", help="openai: 'chat' or 'responses' (default: responses for gpt-5-pro, o3-pro, ...)."
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option("--batch", help="Use the provider's batch API (OpenAI, Anthropic): half price, hours."),
    ] = False,
    batch_option: Annotated[
        list[str] | None,
        typer.Option(
            "--batch-option",
            help="KEY=VALUE: wait=false, poll_interval_s=60, max_requests=N, retry=online|batch, max_rounds=N.",
        ),
    ] = None,
) -> None:
    """Evaluate MODEL on a benchmark; writes manifest.json, predictions.jsonl, judgments.jsonl, scores.json.

    Exit status: 0 when every record got a model answer; 3 when the run finished and wrote
    everything but some records scored 0 without one (media, request or judge failures, invalid
    records; counted in scores.json), unless --allow-failures; 2 for usage and data errors; 130 when
    interrupted (re-run the same command to resume).
    """
    from expvid.run.evaluate import evaluate

    require_http_urls("--base-url", *(base_url or []))
    require_http_urls("--judge-base-url", judge_base_url)
    require_spec_urls("--model", model)
    require_spec_urls("--judge", judge)

    suite_given = suite is not None
    suite = suite or "expvid"
    try:
        counts = parse_frame_counts(frames) if frames else {}
        variants = parse_key_values(variant or [], flag="--variant", bare_is_true=True)
        suite_options = parse_key_values(suite_option or [], flag="--suite-option", bare_is_true=False)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    if judge_input not in (None, *JUDGE_INPUTS):
        raise typer.BadParameter(f"expected one of {', '.join(JUDGE_INPUTS)}", param_hint="--judge-input")
    if keep_times:
        variants["keep_times"] = True
    if language is not None:
        suite_options["languages"] = ["en", "zh"] if language == "both" else [language]
    if bertscore is not None:
        suite_options["bertscore"] = bertscore
    if input_mode not in ("images", "video"):
        raise typer.BadParameter(
            f"expected 'images' or 'video', got {input_mode!r}", param_hint="--input-mode"
        )
    frame_options = FrameOptions(
        counts=counts,
        fps=fps,
        max_frames=max_frames,
        max_images=max_images,
        **_output_size(size, max_side),
    )
    if frame_preset is not None:
        frame_options = _with_preset(suite, frame_preset, frame_options)
        variants = _with_prompt_preset(suite, frame_preset, variants)
    try:
        backend_options: dict[str, object] = _json_key_values(backend_option or [])
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    if base_url and len(base_url) == 1:
        backend_options["base_url"] = base_url[0]
    elif base_url:
        backend_options["base_urls"] = list(base_url)
    if tensor_parallel_size is not None:
        backend_options["tensor_parallel_size"] = tensor_parallel_size
    if vllm_args:
        backend_options["vllm_args"] = shlex.split(vllm_args)
    thinking_config = None
    if thinking is not None or thinking_budget is not None:
        enabled = thinking if thinking is not None else thinking_budget != 0
        thinking_config = ThinkingConfig(enabled=enabled, budget_tokens=thinking_budget)
    if api_key_env:
        backend_options["api_key_env"] = api_key_env
    if api is not None:
        if api not in ("chat", "responses"):
            raise typer.BadParameter(f"expected 'chat' or 'responses', got {api!r}", param_hint="--api")
        backend_options["api"] = api
    if timeout:
        backend_options["timeout_s"] = timeout
    task_names = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    data_root, suite = _resolve_data(data, suite, suite_given, task_names, suite_options, cache_dir)
    config = EvalConfig(
        suite=suite,
        data=data_root,
        model=model,
        out=out,
        tasks=task_names,
        limit=limit,
        concurrency=concurrency,
        frames=frame_options,
        prompt=PromptOptions(with_asr=with_asr, variant=variants),
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
        samples=samples,
        suite_options=suite_options,
        human_judgments=human_judgments,
        thinking=thinking_config,
        judge_input=judge_input,
        input_mode=input_mode,
        prices=_prices(price or []),
        max_cost=max_cost or None,
        max_tokens_total=max_tokens_total,
        batch=_batch_settings(batch, batch_option or []),
    )
    if dry_run:
        from expvid.run.estimate import estimate_markdown, estimate_run

        with friendly_errors():
            typer.echo(estimate_markdown(estimate_run(config)))
        return
    try:
        with friendly_errors():
            result = asyncio.run(evaluate(config, command=sys.argv, console=console, show_progress=not quiet))
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/]: finished items are saved in {escape(str(out))}; re-run the same command to resume"
        )
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    if result.pending:
        console.print(
            f"{result.pending} request(s) are waiting in the provider's batches (ids in "
            f"{escape(str(out / 'batches'))}); re-run the same command to collect them"
        )
    table = build_table(get_suite(suite), load_runs([out]), references=[])
    typer.echo(to_markdown(table))
    console.print(
        f"{result.generated} item(s) run, {result.resumed} reused from the run directory, "
        f"{result.failed} failed"
        + (f", {result.not_sent} not sent (budget)" if result.not_sent else "")
        + f"; scores in {escape(str(result.rundir.scores_path))}"
    )
    if result.n_problems and not allow_failures:
        console.print(
            f"[yellow]{result.n_problems} record(s) scored 0 without a model answer[/] (see the notes above); "
            f"exit status {EXIT_ITEMS_FAILED} (--allow-failures for 0)"
        )
        raise typer.Exit(code=EXIT_ITEMS_FAILED)


def _prices(entries: list[str]) -> dict[str, object]:
    """`--price [MODEL=]IN,OUT` entries by model name ("" for the evaluated model)."""
    from expvid.models.pricing import parse_price_override

    prices: dict[str, object] = {}
    for entry in entries:
        try:
            model, value = parse_price_override(entry)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--price") from None
        prices[model or ""] = value
    return prices


def _batch_settings(enabled: bool, entries: list[str]) -> BatchSettings | None:
    """`--batch` with its `--batch-option KEY=VALUE` settings (validated by `BatchSettings`)."""
    from pydantic import ValidationError

    if not enabled:
        if entries:
            raise typer.BadParameter("--batch-option needs --batch", param_hint="--batch-option")
        return None
    try:
        return BatchSettings(**parse_key_values(entries, flag="--batch-option", bare_is_true=False))
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise typer.BadParameter(problems, param_hint="--batch-option") from None
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None


def _output_size(size: int | None, max_side: int | None) -> dict[str, int | None]:
    """The output-size fields the command line sets (none: the suite's paper resolution applies)."""
    if size is not None and max_side is not None:
        raise typer.BadParameter("give --size or --max-side, not both", param_hint="--max-side")
    if size is not None:
        return {"size": size or None, "max_side": None}
    if max_side is not None:
        return {"size": None, "max_side": max_side or None}
    return {}


def _resolve_data(
    data: str,
    suite: str,
    suite_given: bool,
    tasks: list[str] | None,
    suite_options: dict[str, object],
    cache_dir: Path | None,
) -> tuple[Path, str]:
    """`--data` as a local root; an `hf:` spec is fetched into the cache first (expvid.hub.dataspec)."""
    if not data.startswith("hf:"):
        return Path(data), suite
    from expvid.hub.dataspec import resolve_data

    languages = suite_options.get("languages")
    with friendly_errors():
        return resolve_data(
            data,
            suite=suite,
            tasks=tasks,
            languages=languages if isinstance(languages, list) else None,
            cache_root=cache_dir or default_cache_root(),
            echo=lambda line: console.print(line, highlight=False, markup=False),
            suite_was_given=suite_given,
        )


def _with_preset(suite: str, name: str, explicit: FrameOptions) -> FrameOptions:
    """The suite's preset for `name` (frames and resolution), with every frame option given on the
    command line on top."""
    chooser = getattr(get_suite(suite), "frame_preset", None)
    if not callable(chooser):
        raise typer.BadParameter(f"the {suite} suite has no frame presets", param_hint="--frame-preset")
    try:
        preset: FrameOptions = chooser(name)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--frame-preset") from None
    update: dict[str, object] = {
        "counts": explicit.counts or preset.counts,
        "fps": explicit.fps if explicit.fps is not None else preset.fps,
        "max_frames": explicit.max_frames if explicit.max_frames is not None else preset.max_frames,
    }
    if not resolution_given(explicit) and resolution_given(preset):
        update |= {"size": preset.size, "max_side": preset.max_side}
    return explicit.model_copy(update=update)


def _with_prompt_preset(suite: str, name: str, variants: dict[str, object]) -> dict[str, object]:
    """The prompt variant a preset implies (SciVideoBench gpt-4o -> the gpt4v post prompt, as lmms-eval
    picks it by model), unless the command line chose the prompt itself."""
    chooser = getattr(get_suite(suite), "prompt_preset", None)
    if not callable(chooser):
        return variants
    implied: dict[str, object] = chooser(name)
    return {**implied, **variants} if not set(implied) & set(variants) and "cot" not in variants else variants


def _json_key_values(entries: list[str]) -> dict[str, object]:
    """`KEY=VALUE` pairs; VALUE is JSON when it parses (numbers, lists, true), else the plain string."""
    options: dict[str, object] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--backend-option: expected KEY=VALUE, got {entry!r}")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def default_cache_root() -> Path:
    from expvid.media.cache import default_cache_dir

    return default_cache_dir()
