"""`expvid score`: score predictions without querying a model or decoding any video.

expvid score RUN_DIR [--judge SPEC]                 re-score a run (e.g. with another judge)
expvid score --data DIR --predictions FILE --out DIR   score a JSONL made anywhere else
expvid score --from lmms-eval LOGDIR [--data DIR]       score lmms-eval's logged samples, item by item
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.errors import friendly_errors, require_http_urls
from expvid.cli.suite_flags import DEFAULT_SUITE, SuiteCommand, suite_option_flag
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.suites.registry import get_suite
from expvid.suites.settings import SettingsError, parse_pairs


def score_command(
    run_dir: Annotated[Path | None, typer.Argument(help="Run directory to re-score.")] = None,
    data: Annotated[Path | None, typer.Option("--data", help="Dataset root (with --predictions).")] = None,
    predictions: Annotated[
        Path | None,
        typer.Option("--predictions", help='JSONL of {"id", "response"} or {"id", "task", "response"}.'),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write the scored run (with --predictions).")
    ] = None,
    suite: Annotated[
        str, typer.Option("--suite", help="Suite of --data / --from logs (`expvid suites list`).")
    ] = DEFAULT_SUITE,
    judge: Annotated[
        str | None, typer.Option("--judge", help="LLM judge spec (default: offline judge).")
    ] = None,
    judge_base_url: Annotated[str | None, typer.Option("--judge-base-url")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option("--judge-api-key-env")] = None,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
    quiet: Annotated[bool, typer.Option("--quiet")] = False,
    from_tool: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="lmms-eval: RUN_DIR is an lmms-eval --output_path with samples_*.jsonl (--log_samples).",
        ),
    ] = None,
) -> None:
    """Score a run directory, an external predictions file, or lmms-eval logs (--from lmms-eval).

    Re-scoring a run may change its scoring settings (`-S judge_input=stripped`); settings that
    changed what the model was asked cannot change.
    """
    from expvid.run.rescore import JudgeChoice, rescore_run, score_external

    require_http_urls("--judge-base-url", judge_base_url)
    choice = JudgeChoice(spec=judge, base_url=judge_base_url, api_key_env=judge_api_key_env)
    try:
        options: dict[str, object] = dict(parse_pairs(suite_option or []))
    except SettingsError as error:
        raise typer.BadParameter(str(error), param_hint="-S") from None
    if from_tool is not None:
        _score_lmms_eval(from_tool, run_dir, data, out, suite, choice, quiet)
        return
    with friendly_errors():
        if predictions is not None:
            if data is None or out is None:
                raise typer.BadParameter("--predictions needs --data and --out")
            target = out
            asyncio.run(
                score_external(
                    suite=suite,
                    data=data,
                    predictions=predictions,
                    out=out,
                    judge=choice,
                    show_progress=not quiet,
                    settings=options,
                )
            )
        elif run_dir is not None:
            target = run_dir
            asyncio.run(rescore_run(run_dir, judge=choice, show_progress=not quiet, settings=options))
        else:
            raise typer.BadParameter("give a RUN_DIR, or --data, --predictions and --out")
        runs = load_runs([target])
        table_suite = get_suite(runs[0].scores.run.suite)
        typer.echo(to_markdown(build_table(table_suite, runs, references=[])))


def _score_lmms_eval(
    tool: str,
    logdir: Path | None,
    data: Path | None,
    out: Path | None,
    suite: str,
    choice: object,
    quiet: bool,
) -> None:
    """`--from lmms-eval LOGDIR`: expvid's scores next to lmms-eval's for every logged item."""
    from expvid.export.lmms_eval_compare import compare_logs, data_from_results, summary_lines

    if tool != "lmms-eval":
        raise typer.BadParameter(f"unknown source {tool!r}; supported: lmms-eval", param_hint="--from")
    if logdir is None:
        raise typer.BadParameter("give the lmms-eval log folder (its --output_path) as the argument")
    data = data or data_from_results(logdir)
    if data is None:
        raise typer.BadParameter("--data DIR is needed (the logs do not name the benchmark they ran on)")
    target = out or logdir / "expvid-score"
    with friendly_errors():
        comparison = asyncio.run(
            compare_logs(logdir, suite=suite, data=data, out=target, judge=choice, show_progress=not quiet)
        )
    for line in summary_lines(comparison):
        typer.echo(line)
    typer.echo(f"per-item comparison: {target / 'lmms_eval_comparison.jsonl'}; expvid run: {target}")


score_command.command_class = SuiteCommand  # type: ignore[attr-defined]
