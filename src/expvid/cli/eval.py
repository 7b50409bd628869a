"""`expvid eval`: evaluate one model on a suite and write a resumable run directory.

The command only declares its options; `expvid.run.eval_options.EvalOptions` turns them into the
run's configuration and `expvid.cli.eval_run` runs it. Suite settings are `-S KEY=VALUE`
(`expvid suites show NAME`, or `expvid eval --suite NAME --help`). Nothing heavy is imported here,
so `expvid eval --help` starts fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.common_options import (
    AllowFailures,
    Concurrency,
    DataSpec,
    Fps,
    FrameCounts,
    FrameSize,
    JudgeSpec,
    MaxFrames,
    MaxSide,
    Quiet,
    Seed,
    TaskNames,
)
from expvid.cli.suite_flags import SuiteCommand, SuiteOfData, suite_option_flag
from expvid.commands.endpoints import (
    ApiKeyEnvOption,
    BackendOptionOption,
    BaseUrlOption,
    MaxRetriesOption,
    TimeoutOption,
)


def eval_command(
    data: DataSpec,
    model: Annotated[
        str, typer.Option("--model", help="Model spec: openai:MODEL[@URL], random, blind:SPEC, ...")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Run directory (created; re-run the same command to resume).")
    ],
    suite: SuiteOfData = None,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
    tasks: TaskNames = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N items per task.")] = None,
    concurrency: Concurrency = 8,
    frames: FrameCounts = None,
    fps: Fps = None,
    max_frames: MaxFrames = None,
    size: FrameSize = None,
    max_side: MaxSide = None,
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
    frames_control: Annotated[
        str,
        typer.Option(
            "--frames-control",
            help="A control run for `expvid audit`: full (default), none (no frames: text only), single (the "
            "middle frame only) or shuffled (the frames in a seeded order). Recorded; part of the resume identity.",
        ),
    ] = "full",
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Default: the paper's (0.1).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Default: the paper's (8192).")
    ] = None,
    judge: JudgeSpec = None,
    judge_base_url: Annotated[str | None, typer.Option("--judge-base-url")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option("--judge-api-key-env")] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    timeout: TimeoutOption = None,
    max_retries: MaxRetriesOption = None,
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
    backend_option: BackendOptionOption = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Frame and response cache (default ~/.cache/expvid).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Disable frame and response caches.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on any malformed data line.")] = False,
    no_retry_failed: Annotated[
        bool, typer.Option("--no-retry-failed", help="On resume, keep failed items failed.")
    ] = False,
    stop_after_errors: Annotated[
        int,
        typer.Option(
            "--stop-after-errors",
            min=0,
            help="Stop (resumable, exit 2) after N requests in a row fail with the same non-transient "
            "error (e.g. HTTP 400/404); 0 never stops.",
        ),
    ] = 10,
    seed: Seed = 0,
    quiet: Quiet = False,
    samples: Annotated[
        int, typer.Option("--samples", min=1, help="Samples per item for pass@k (sample s uses seed + s).")
    ] = 1,
    allow_failures: AllowFailures = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print requests, images, tokens and cost per task; send and write nothing."
        ),
    ] = False,
    price: Annotated[
        list[str] | None,
        typer.Option(
            "--price",
            help="USD per 1M tokens: [MODEL=]IN,OUT[,CACHED] (default: the price table). Repeatable.",
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
    image_detail: Annotated[
        str | None,
        typer.Option(
            "--image-detail",
            help="openai: the `detail` of every frame: high, low or auto (default: none sent, OpenAI's auto; "
            "its image tokens are then only bounded, not known).",
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch", help="Use the provider's batch API (OpenAI, Anthropic, Gemini): half price, hours."
        ),
    ] = False,
    batch_option: Annotated[
        list[str] | None,
        typer.Option(
            "--batch-option",
            help="KEY=VALUE: wait=false, poll_interval_s=60, max_requests=N, retry=online|batch, max_rounds=N, "
            "tier=1-5 or queue_tokens=N (OpenAI's batch queue), on_queue_limit=wait|online, uncertain=cancel|wait.",
        ),
    ] = None,
) -> None:
    """Evaluate MODEL on a benchmark; writes manifest.json, predictions.jsonl, judgments.jsonl, scores.json.

    Exit status: 0 when every record got a model answer; 3 when the run finished and wrote
    everything but some records scored 0 without one (media, request or judge failures, invalid
    records; counted in scores.json), unless --allow-failures; 4 when it stopped at its budget
    before finishing (a larger budget continues); 5 when requests are still waiting in a
    provider's batches (run it again later); 2 for usage and data errors; 130 when interrupted
    (re-run the same command to resume).
    """
    given = dict(locals())  # the parameters, by name (taken before anything else is bound here)
    from expvid.cli.eval_run import run_eval

    run_eval(given)


eval_command.command_class = SuiteCommand  # type: ignore[attr-defined]
