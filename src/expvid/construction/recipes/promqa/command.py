"""`expvid build SOURCES --recipe promqa --out DIR --llm SPEC [-R KEY=VALUE ...]`: ProMQA candidates.

SOURCES is CaptainCook4D's layout (annotation_json/, task_graphs/, recordings under videos/ or the
downloader's resolution_* folders); see docs/build_promqa.md. `expvid build`'s model, price,
attempt, concurrency and seed flags apply; the recipe's own settings come as `-R KEY=VALUE`
(`expvid.construction.recipes.promqa.config`). `--temperature` and `--max-tokens` at their ExpVid
defaults mean the official generation settings (0.7, 512); `-R temperature=T` / `-R max_tokens=N`
set them explicitly.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import typer

from expvid.commands.endpoints import endpoint_options_of
from expvid.commands.errors import friendly_errors, require_spec_urls
from expvid.construction.recipes.built import built_release
from expvid.recipes.api import BuiltRelease
from expvid.run.terminal import message_console

#: `expvid build`'s defaults, which for this recipe mean "the official generation settings".
_EXPVID_TEMPERATURE = 0.0
_EXPVID_MAX_TOKENS = 8192
#: ExpVid-only flags that must stay at their defaults here (a value would be silently ignored).
_EXPVID_ONLY = {
    "vlm": None,
    "blind_llm": None,
    "review": False,
    "trim_slides": False,
    "redo": None,
    "no_asr_audit": False,
    "no_domain_audit": False,
    "no_ordering_repair": False,
}


def _split_generation(options: list[str]) -> tuple[list[str], dict[str, float | int]]:
    rest, generation = [], {}
    for pair in options:
        key, _, value = pair.partition("=")
        if key.strip() == "temperature":
            generation["temperature"] = float(value)
        elif key.strip() == "max_tokens":
            generation["max_tokens"] = int(value)
        else:
            rest.append(pair)
    return rest, generation


def run_promqa(params: dict[str, Any]) -> BuiltRelease | None:
    """Called by `expvid build` with its parsed parameters when `--recipe promqa`; the release
    written, for the audit gate (None for a dry run)."""
    from expvid.construction.recipes.build_flags import prices_of
    from expvid.construction.recipes.promqa.config import (
        GENERATION_MAX_TOKENS,
        GENERATION_TEMPERATURE,
        RELEASE_SUITE,
        RecipeOptionError,
        build_config,
        recipe_options,
    )

    console = message_console(stderr=True)
    for name, default in _EXPVID_ONLY.items():
        if params.get(name, default) not in (default, None, False):
            flag = "--" + name.replace("_", "-")
            raise typer.BadParameter(f"{flag} belongs to the expvid recipe", param_hint=flag)
    prices = prices_of(params.get("price"))
    require_spec_urls("--llm", params.get("llm"))
    backend_options = endpoint_options_of(params)
    try:
        rest, generation = _split_generation(list(params.get("recipe_option") or []))
        options = recipe_options(rest)
    except (RecipeOptionError, ValueError) as error:
        raise typer.BadParameter(str(error), param_hint="-R") from None
    temperature = generation.get("temperature")
    if temperature is None:
        given = params.get("temperature", _EXPVID_TEMPERATURE)
        temperature = GENERATION_TEMPERATURE if given == _EXPVID_TEMPERATURE else given
    max_tokens = generation.get("max_tokens")
    if max_tokens is None:
        given_tokens = params.get("max_tokens", _EXPVID_MAX_TOKENS)
        max_tokens = GENERATION_MAX_TOKENS if given_tokens == _EXPVID_MAX_TOKENS else given_tokens
    try:
        config = build_config(
            sources=Path(params["sources"]),
            out=Path(params["out"]),
            llm=params["llm"],
            options=options,
            prices=prices,
            backend_options=backend_options,
            temperature=float(temperature),
            max_tokens=int(max_tokens),
            max_attempts=params.get("max_attempts", 3),
            concurrency=params.get("concurrency", 8),
            seed=params.get("seed", 0),
            retry_failed=params.get("redo_failed", True),
            preset=params.get("preset", "veryfast"),
        )
    except RecipeOptionError as error:
        raise typer.BadParameter(str(error), param_hint="-R") from None
    quiet = bool(params.get("quiet"))
    if params.get("dry_run"):
        from expvid.construction.recipes.promqa.estimate import estimate_markdown, estimate_promqa

        with friendly_errors():
            estimate = estimate_promqa(config)
        typer.echo(estimate_markdown(estimate), nl=False)
        return None
    from expvid.construction.progress_bars import build_progress
    from expvid.construction.recipes.promqa.pipeline import build_promqa

    def log(message: str) -> None:
        if not quiet:
            console.print(message, markup=False)

    with friendly_errors(), build_progress(console, enabled=not quiet) as progress:
        report = asyncio.run(build_promqa(config, log=log, progress=progress))
    calls, cost = report["calls"], report["cost"]
    spent = "unknown" if cost["this_run"] is None else f"${cost['this_run']:.4f}"
    console.print(
        f"{report['total_items']} ProMQA candidate(s) in {config.out} from {report['sampling']['total']} sampled "
        f"example(s); {calls['sent']} model call(s) sent, {calls['cache_hits']} from the cache, "
        f"{calls['failures']} failed; est. cost {spent}; see {config.out / 'build_report.md'}",
        markup=False,
    )
    return built_release(console, config.out, RELEASE_SUITE, report)
