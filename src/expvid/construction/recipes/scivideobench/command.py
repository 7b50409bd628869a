"""`expvid build SOURCES --recipe scivideobench --out DIR --llm SPEC [-R KEY=VALUE ...]`.

The shared build flags (--llm, --blind-llm, --blind-samples, --blind-margin, --price, --concurrency,
--base-url, --api-key-env, --timeout, --max-retries, --max-attempts, --temperature, --max-tokens,
--redo-failed/--keep-failed, --redo, --dry-run, --quiet) mean what they mean for the ExpVid recipe
(`--redo` stages: transcription, generator, evaluator, comparer, refiner, blind); this recipe's own
settings come as `-R KEY=VALUE`:

    stt=faster-whisper:MODEL|openai:MODEL@URL   speech-to-text for videos without a transcript
    stt_price=USD_PER_MINUTE   stt_language=en   stt_api_key_env=VAR   stt_beam_size=5
    per_type=conceptual:2,hypothetical:2,quantitative:2   questions asked per experiment and type
    exemplars=FILE   prompts=DIR   frames=16   frame_max_side=448   paper_chars=24000   noise=0.2
    generator=frames|video|text   what the QA generator sees of the video (default frames)
    disciplines=FILE   JSON {label: Biology|Chemistry|Medicine|Physics} for meta.json labels
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from expvid.commands.endpoints import endpoint_options_of
from expvid.commands.errors import friendly_errors, require_spec_urls
from expvid.construction.recipes.built import built_release
from expvid.construction.recipes.speech_options import STT_KEYS, recipe_options, stt_settings
from expvid.recipes.api import BuiltRelease
from expvid.run.terminal import message_console

console = message_console(stderr=True)

#: ExpVid-only flags and their defaults: a value other than the default is refused, not ignored.
EXPVID_ONLY = {
    "vlm": None,
    "levels": "1,2,3",
    "trim_slides": False,
    "review": False,
    "min_duration": None,
    "max_duration": None,
    "no_ordering_repair": False,
}
#: `expvid build` flags that are settings of the same name (the recipe reads them unchanged).
SAME_NAME_FLAGS = (
    "sources",
    "out",
    "llm",
    "blind_samples",
    "blind_margin",
    "temperature",
    "max_tokens",
    "max_attempts",
    "concurrency",
)
RECIPE_KEYS = (
    *STT_KEYS,
    "per_type",
    "exemplars",
    "prompts",
    "frames",
    "frame_max_side",
    "paper_chars",
    "noise",
    "generator",
    "disciplines",
)


def _per_type(text: str) -> dict[str, int]:
    counts = {}
    for part in text.split(","):
        name, _, number = part.partition(":")
        try:
            counts[name.strip()] = int(number)
        except ValueError:
            raise typer.BadParameter(f"per_type {text!r}: expected TYPE:N,...", param_hint="-R") from None
    return counts


def config_from(values: dict[str, Any]) -> Any:
    from expvid.construction.recipes.build_flags import prices_of, redo_of
    from expvid.construction.recipes.scivideobench import SvbBuildConfig
    from expvid.construction.recipes.scivideobench.config import REDO_STAGES

    for name, default in EXPVID_ONLY.items():
        if values.get(name) != default:
            flag = "--" + name.replace("_", "-")
            raise typer.BadParameter(
                f"{flag} belongs to the expvid recipe", param_hint="--recipe scivideobench"
            )
    options = recipe_options(values.get("recipe_option") or [], RECIPE_KEYS)
    prices = prices_of(values.get("price"))
    require_spec_urls("--llm", values.get("llm"))
    require_spec_urls("--blind-llm", values.get("blind_llm"))
    backend_options = endpoint_options_of(values)
    stt = stt_settings(options)
    redo = redo_of(values.get("redo"), REDO_STAGES)
    try:
        extra: dict[str, Any] = {}
        for key in ("frames", "frame_max_side", "paper_chars"):
            if key in options:
                extra[key] = int(options[key])
        if "noise" in options:
            extra["noise"] = float(options["noise"])
        for key in ("exemplars", "prompts", "disciplines"):
            if key in options:
                extra[key] = Path(options[key]).expanduser()
        if "generator" in options:
            extra["generator"] = options["generator"].strip()
        if "per_type" in options:
            extra["per_type"] = _per_type(options["per_type"])
        return SvbBuildConfig(
            **{name: values[name] for name in SAME_NAME_FLAGS},
            blind_llm=values.get("blind_llm"),
            stt=stt,
            backend_options=backend_options,
            prices=prices,
            retry_failed=values["redo_failed"],
            redo=redo,
            **extra,
        )
    except (ValidationError, ValueError) as error:
        raise typer.BadParameter(
            str(error).splitlines()[0]
            if isinstance(error, ValueError) and not isinstance(error, ValidationError)
            else str(error),
            param_hint="-R",
        ) from None


def run_scivideobench(values: dict[str, Any]) -> BuiltRelease | None:
    """Build (or with --dry-run estimate) a SciVideoBench-format candidate directory; the release
    written, for the audit gate (None for a dry run)."""
    from expvid.construction.recipes.scivideobench import build_scivideobench, estimate_scivideobench
    from expvid.construction.recipes.scivideobench.config import RELEASE_SUITE

    config = config_from(values)
    if values.get("dry_run"):
        from expvid.construction.recipes.scivideobench.estimate import estimate_markdown

        with friendly_errors():
            estimate = asyncio.run(estimate_scivideobench(config))
        typer.echo(estimate_markdown(estimate), nl=False)
        return None

    def log(message: str) -> None:
        if not values.get("quiet"):
            console.print(message, markup=False)

    with friendly_errors():
        report = asyncio.run(build_scivideobench(config, log=log))
    calls, total = report["calls"], report["total_cost"]["this_run"]
    spent = "unknown" if total is None else f"${total:.4f}"
    kinds = ", ".join(f"{t} {e['kept']}" for t, e in report["items"].items())
    console.print(
        f"{report['total_items']} SciVideoBench item(s) in {config.out} ({kinds}); {report['flagged_items']} flagged; "
        f"{calls['sent']} model call(s) sent, {calls['cache_hits']} from the cache; est. cost {spent}; "
        f"see {config.out / 'build_report.md'}",
        markup=False,
    )
    for video_id, reasons in report["experiments"]["rejected"].items():
        console.print(f"rejected {video_id}: {'; '.join(reasons)}", markup=False)
    for unit in report["failed_units"][:20]:
        console.print(f"failed: {unit['video_id']} {unit['stage']}: {unit['message']}", markup=False)
    return built_release(console, config.out, RELEASE_SUITE, report)
