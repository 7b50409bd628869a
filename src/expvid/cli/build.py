"""`expvid build SOURCES_DIR --out CANDIDATES_DIR --llm SPEC [--vlm SPEC]`: draft a candidate benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from expvid.cli.common_options import Concurrency, Seed
from expvid.commands.endpoints import (
    ApiKeyEnvOption,
    BackendOptionOption,
    BaseUrlOption,
    MaxRetriesOption,
    TimeoutOption,
)
from expvid.recipes.api import BuiltRelease
from expvid.recipes.defaults import DEFAULT_RECIPE
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
    concurrency: Concurrency = 8,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    timeout: TimeoutOption = None,
    max_retries: MaxRetriesOption = None,
    backend_option: BackendOptionOption = None,
    preset: Annotated[str, typer.Option("--preset", help="x264 preset for clips.")] = "veryfast",
    levels: Annotated[str, typer.Option("--levels", help="Levels to draft, e.g. 1,2,3 or 2.")] = "1,2,3",
    seed: Seed = 0,
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
            help="Draft again with fresh requests: STAGE or STAGE:EXPERIMENT_ID, comma-separated; the "
            "recipe's stages (`expvid recipes show NAME`; the default recipe's: transcription, curation, "
            "level1, level2, level3, blind_audit).",
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
        typer.Option("--recipe", help="The build recipe: whose construction (`expvid recipes list`)."),
    ] = DEFAULT_RECIPE,
    recipe_option: Annotated[
        list[str] | None,
        typer.Option(
            "-R",
            "--recipe-option",
            help="KEY=VALUE setting of the recipe (`expvid recipes show NAME` lists them, typed). The default "
            "recipe's: speech-to-text for videos without a transcript, stt=faster-whisper:MODEL|"
            "openai:MODEL@URL, stt_price (USD/min), stt_language, stt_api_key_env, stt_beam_size. Repeatable.",
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
    """Build a candidate benchmark from sources with a recipe (default: ExpVid's Level-1/2/3 items).

    The default recipe curates experiments and drafts Level-1/2/3 items with leakage audits (ExpVid
    sections 3.1-3.3 and G); `expvid recipes list` names the others.

    Every recipe's release then passes the audit gate (audit.json/md/html beside build_report.json).
    Exits 1 when units failed (listed in build_report.md; the next run asks exactly those again),
    2 on bad input, 6 when the release is written but a text-only solver beats chance on it and
    --accept-audit does not accept it.
    """
    values = dict(locals())
    from expvid.cli.build_gate import finish_build, read_accepted

    exceptions = read_accepted(accept_audit)
    built = run_recipe(recipe, values)
    finish_build(built, accept_audit=accept_audit, exceptions=exceptions, quiet=quiet)


def run_recipe(name: str, values: dict[str, Any]) -> BuiltRelease | None:
    """Find the recipe `name` in the registry and run its build with this command's parameters; its
    refusals (`RecipeError`) become one-line usage errors (exit 2)."""
    from expvid.recipes.api import BuildRequest, RecipeError
    from expvid.recipes.registry import UnknownRecipeError, get_recipe

    try:
        the_recipe = get_recipe(name)
    except UnknownRecipeError as error:
        raise typer.BadParameter(str(error), param_hint="--recipe") from None
    request = BuildRequest(
        sources=Path(values["sources"]),
        out=Path(values["out"]),
        llm=str(values["llm"]),
        options=tuple(values.get("recipe_option") or ()),
        flags=values,
        defaults=_defaults(),
    )
    try:
        built: BuiltRelease | None = the_recipe.build(request)
    except RecipeError as error:
        raise typer.BadParameter(str(error), param_hint=error.hint or f"--recipe {name}") from None
    return built


def _defaults() -> dict[str, Any]:
    """Each parameter of `expvid build` -> its value when not given (for `BuildRequest.changed`)."""
    import inspect

    defaults = {}
    for parameter in inspect.signature(build_command).parameters.values():
        default = parameter.default
        if isinstance(default, typer.models.ParameterInfo):
            default = default.default
        if default is not inspect.Parameter.empty:
            defaults[parameter.name] = default
    return defaults
