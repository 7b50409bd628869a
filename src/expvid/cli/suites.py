"""`expvid suites list|show`: the installed suites (built in or from other packages) and their settings."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from expvid.cli.plugin_listing import echo_description, echo_listing, plugin_title

suites_app = typer.Typer(no_args_is_help=True, help="List the installed benchmark suites and their settings.")


@suites_app.callback()
def _suites() -> None:
    """List the installed benchmark suites and their settings."""


@suites_app.command("list")
def list_suites() -> None:
    """Every installed suite: its name, where it comes from and what it is."""
    from expvid.suites.registry import UnknownSuiteError, suite_class, suite_names

    echo_listing(
        suite_names(),
        suite_class,
        UnknownSuiteError,
        lambda name, cls: f"{name}  {plugin_title(cls)}  [{cls.__module__}]",
    )


@suites_app.command("show")
def show_suite(
    name: Annotated[str, typer.Argument(help="Suite name (see `expvid suites list`).", metavar="NAME")],
) -> None:
    """A suite's tasks, its published release and its settings (set with `-S KEY=VALUE`)."""
    echo_description(describe_suite, name, ValueError)


def describe_suite(name: str) -> str:
    """The text `expvid suites show NAME` prints; `ValueError` for an unknown suite."""
    from expvid.suites.registry import settings_model, suite_class
    from expvid.suites.settings import describe_settings

    cls = suite_class(name)
    lines = [f"{name}: {plugin_title(cls)}", ""]
    lines.append("tasks: " + ", ".join(f"{spec.name} ({spec.metric})" for spec in getattr(cls, "tasks", ())))
    repo = getattr(cls, "hub_repo", None)
    if repo:
        lines.append(f"release: hf:{repo} (expvid data fetch {name} DIR)")
    if callable(getattr(cls, "make_sample", None)):
        lines.append(f"sample: expvid sample make DIR --suite {name}")
    settings = describe_settings(settings_model(name))
    lines += ["", f"settings (-S KEY=VALUE; {len(settings)}):" if settings else "settings: none"]
    for info in settings:
        kind = f"one of {', '.join(info.choices)}" if info.choices else info.type
        scoring = "; scoring only: may change on `expvid score`" if info.scoring else ""
        lines.append(f"  {info.key} = {_shown(info.default)}  ({kind}{scoring})")
        lines.append(f"      {info.help}")
        if info.paper:
            lines.append(f"      source: {info.paper}")
    lines += _analysis_lines(name)
    presets = getattr(cls, "frame_presets", None) or {}
    if presets:
        lines += [
            "",
            f"frame presets (-S frame_preset=NAME; {len(presets)}; options on the command line win):",
        ]
        lines += [f"  {', '.join(names)}: {what}" for what, names in _preset_groups(presets).items()]
    return "\n".join(lines)


def _analysis_lines(name: str) -> list[str]:
    """The suite's analyses across runs (`Suite.run_analyses`), with the command that prints each."""
    from expvid.suites.registry import get_suite

    hook = getattr(get_suite(name), "run_analyses", None)
    analyses = dict(hook()) if callable(hook) else {}
    if not analyses:
        return []
    lines = ["", f"analyses across runs (expvid report RUNS --analysis NAME; {len(analyses)}):"]
    lines += [f"  {key}: {analysis.help}" for key, analysis in sorted(analyses.items())]
    return lines


def _preset_groups(presets: Any) -> dict[str, list[str]]:
    """Every preset's name, grouped by what it sets (aliases and models run alike share a line)."""
    groups: dict[str, list[str]] = {}
    for preset_name, frames in presets.items():
        groups.setdefault(describe_preset(frames), []).append(preset_name)
    return groups


def describe_preset(frames: Any) -> str:
    """What a frame preset sets: frames per key or a rate with its cap, and the resolution if it sets one."""
    parts = []
    counts = dict(frames.counts)
    if list(counts) == ["all"]:
        parts.append(f"{counts['all']} frames")
    elif counts:
        parts.append(", ".join(f"{key} {count}" for key, count in counts.items()) + " frames")
    if frames.fps is not None:
        parts.append(f"{frames.fps:g} fps")
    if frames.max_frames is not None:
        parts.append(f"at most {frames.max_frames} frames")
    if {"size", "max_side"} & frames.model_fields_set:
        if frames.size is not None:
            parts.append(f"{frames.size}x{frames.size}")
        elif frames.max_side is not None:
            parts.append(f"longest side {frames.max_side} px")
        else:
            parts.append("source size")
    return "; ".join(parts) or "the suite's defaults"


def _shown(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
