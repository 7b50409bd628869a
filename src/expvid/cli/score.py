"""`expvid score`: score predictions without querying a model or decoding any video.

expvid score RUN_DIR [--judge SPEC]                 re-score a run (e.g. with another judge)
expvid score --data DIR --predictions FILE --out DIR   score a JSONL made anywhere else
expvid score --from lmms-eval LOGDIR [--data DIR]       score lmms-eval's logged samples, item by item
expvid score --from inspect LOGDIR [--data DIR]         score Inspect AI's logs of an exported task

Exit status as `expvid eval`: 0 when every record got a model answer and a judgement where one was
needed; 3 when scores were written but some records scored 0 without one (failed items, invalid
records, judge failures), unless --allow-failures; 2 for usage and data errors.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.common_options import AllowFailures, JudgeSpec, Quiet
from expvid.cli.suite_flags import DEFAULT_SUITE, SuiteCommand, suite_option_flag, suite_settings
from expvid.commands.errors import EXIT_ITEMS_FAILED, friendly_errors, require_http_urls, require_spec_urls
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.suites.registry import get_suite


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
        str | None,
        typer.Option(
            "--suite",
            help="Suite of --data / --from logs (`expvid suites list`; default expvid, or the one Inspect logs name).",
        ),
    ] = None,
    judge: JudgeSpec = None,
    judge_base_url: Annotated[str | None, typer.Option("--judge-base-url")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option("--judge-api-key-env")] = None,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
    quiet: Quiet = False,
    from_tool: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="lmms-eval: RUN_DIR is an lmms-eval --output_path with samples_*.jsonl (--log_samples); "
            "inspect: RUN_DIR is an Inspect AI --log-dir of a task written by `expvid export inspect`.",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ask the judge again instead of reusing cached judge replies.")
    ] = False,
    allow_failures: AllowFailures = False,
) -> None:
    """Score a run directory, an external predictions file, or lmms-eval logs (--from lmms-eval).

    Re-scoring a run may change its scoring settings (`-S judge_input=stripped`, ExpVid's
    `-S judge_protocol=per_blank`); settings that changed what the model was asked cannot change.

    Exit status: 0 when every record got a model answer (and a judgement where needed); 3 when the
    scores were written but some records scored 0 without one (failed items, invalid records, judge
    failures; counted in scores.json), unless --allow-failures; 2 for usage and data errors.
    """
    from expvid.run.rescore import JudgeChoice, rescore_run, score_external

    require_http_urls("--judge-base-url", judge_base_url)
    require_spec_urls("--judge", judge)
    choice = JudgeChoice(
        spec=judge, base_url=judge_base_url, api_key_env=judge_api_key_env, no_cache=no_cache
    )
    options = suite_settings(suite_option)
    if from_tool == "inspect":
        targets = _score_inspect(run_dir, data, out, suite, choice, options, quiet)
        _exit_status(targets, allow_failures)
        return
    suite = suite or DEFAULT_SUITE
    if from_tool is not None:
        targets = _score_lmms_eval(from_tool, run_dir, data, out, suite, choice, quiet)
        _exit_status(targets, allow_failures)
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
    _exit_status([target], allow_failures)


def _exit_status(targets: list[Path], allow_failures: bool) -> None:
    """`expvid eval`'s rule: exit 3 when records scored 0 without a model answer or a judgement."""
    from expvid.run.rundir import RunDir
    from expvid.run.scoring_phase import read_scores
    from expvid.run.terminal import message_console

    problems = sum(read_scores(RunDir(target)).run.n_problems for target in targets)
    if problems and not allow_failures:
        message_console(stderr=True).print(
            f"[yellow]{problems} record(s) scored 0 without a model answer or a judgement[/] (see the notes "
            f"above); exit status {EXIT_ITEMS_FAILED} (--allow-failures for 0)"
        )
        raise typer.Exit(code=EXIT_ITEMS_FAILED)


def _score_lmms_eval(
    tool: str,
    logdir: Path | None,
    data: Path | None,
    out: Path | None,
    suite: str,
    choice: object,
    quiet: bool,
) -> list[Path]:
    """`--from lmms-eval LOGDIR`: expvid's scores next to lmms-eval's for every logged item; returns
    the scored run directories (one per model folder)."""
    from expvid.export.lmms_eval_compare import compare_models, data_from_results, summary_lines

    if tool != "lmms-eval":
        raise typer.BadParameter(
            f"unknown source {tool!r}; supported: lmms-eval, inspect", param_hint="--from"
        )
    if logdir is None:
        raise typer.BadParameter("give the lmms-eval log folder (its --output_path) as the argument")
    data = data or data_from_results(logdir)
    if data is None:
        raise typer.BadParameter(
            "--data DIR is needed (the logs do not name the benchmark they ran on, or name a folder not here)"
        )
    target = out or logdir / "expvid-score"
    with friendly_errors():
        comparisons = asyncio.run(
            compare_models(logdir, suite=suite, data=data, out=target, judge=choice, show_progress=not quiet)
        )
    for line in summary_lines(comparisons):
        typer.echo(line)
    for comparison in comparisons:
        typer.echo(
            f"per-item comparison: {comparison.out / 'lmms_eval_comparison.jsonl'}; expvid run: {comparison.out}"
        )
    return [comparison.out for comparison in comparisons]


def _score_inspect(
    logdir: Path | None,
    data: Path | None,
    out: Path | None,
    suite: str | None,
    choice: object,
    settings: dict[str, object],
    quiet: bool,
) -> list[Path]:
    """`--from inspect LOGDIR`: every model's logged replies scored by expvid (the suite, settings and
    release come from the logs; `--suite` / `--data` only check or relocate them)."""
    from expvid.export.inspect_logs import score_inspect_logs, summary_lines

    if logdir is None:
        raise typer.BadParameter("give the Inspect log folder (its --log-dir) as the argument")
    target = out or logdir / "expvid-score"
    with friendly_errors():
        comparisons = asyncio.run(
            score_inspect_logs(
                logdir, out=target, judge=choice, suite=suite, data=data,
                settings=settings, show_progress=not quiet,
            )
        )  # fmt: skip
        for line in [*summary_lines(comparisons), ""]:
            typer.echo(line)
        runs = load_runs([comparison.out for comparison in comparisons])
        typer.echo(to_markdown(build_table(get_suite(runs[0].scores.run.suite), runs, references=[])))
    for comparison in comparisons:
        typer.echo(f"expvid run: {comparison.out} (expvid report / expvid view {comparison.out})")
    return [comparison.out for comparison in comparisons]


score_command.command_class = SuiteCommand  # type: ignore[attr-defined]
