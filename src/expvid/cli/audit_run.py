"""What `expvid audit` does once its options are parsed: audit, write the three files, exit."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from expvid.cli.common_options import comma_names
from expvid.cli.suite_flags import suite_settings
from expvid.commands.errors import EXIT_PROBLEMS_FOUND, friendly_errors
from expvid.run.terminal import message_console

console = message_console(stderr=True)


def run_audit(
    *,
    data: str,
    out: Path,
    suite: str | None,
    runs: list[Path],
    tasks: str | None,
    suite_option: list[str],
    embeddings: bool,
    fail_on_flag: bool,
    cache_dir: Path | None,
    quiet: bool,
) -> None:
    from expvid.audit.engine import AuditOptions
    from expvid.audit.release import audit_release, load_release, resolve_release
    from expvid.audit.report_html import to_html
    from expvid.audit.report_md import summary_line, to_markdown
    from expvid.audit.runs import find_runs
    from expvid.run.progress import run_progress

    settings = suite_settings(suite_option)
    if out.exists() and not out.is_dir():
        raise typer.BadParameter(f"{out} is a file, not a folder", param_hint="--out")
    chosen = comma_names(tasks)
    echo = lambda line: console.print(line, highlight=False, markup=False)  # noqa: E731
    with friendly_errors():  # bad input is refused before any progress display starts
        root, suite_name = resolve_release(
            data, suite=suite, settings=settings, tasks=chosen, cache_root=cache_dir, echo=echo
        )
        run_dirs = find_runs(runs) if runs else []
        loaded = load_release(root, suite_name, settings, chosen)
    with friendly_errors(), run_progress(console, not quiet) as progress:
        report = audit_release(
            root,
            suite=suite_name,
            settings=settings,
            tasks=chosen,
            runs=run_dirs,
            options=AuditOptions(embeddings=embeddings),
            progress=progress,
            source=data,
            loaded=loaded,
        )
    out.mkdir(parents=True, exist_ok=True)
    report.write(out / "audit.json")
    (out / "audit.md").write_text(to_markdown(report), encoding="utf-8")
    (out / "audit.html").write_text(to_html(report), encoding="utf-8")
    console.print(f"{escape(summary_line(report))}; written to {escape(str(out))}", highlight=False)
    for solver in report.flagged_solvers:
        console.print(
            f"[red]flagged[/]: {escape(solver.name)} on {escape(solver.task)}: {solver.accuracy:.1%} "
            f"(chance {solver.chance:.1%}, n={solver.n}, 95% CI {solver.ci_low:.1%}-{solver.ci_high:.1%})",
            highlight=False,
        )
    for solver in report.informational_solvers:
        console.print(
            f"informational: {escape(solver.name)} on {escape(solver.task)}: {solver.accuracy:.1%} "
            f"(chance {solver.chance:.1%}, n={solver.n}): {escape(solver.informational or '')}",
            highlight=False,
        )
    if fail_on_flag and report.any_flagged:
        raise typer.Exit(code=EXIT_PROBLEMS_FOUND)
