"""`-S KEY=VALUE`, the one way to set a suite's settings, and the old flags it replaces.

Commands that run or load a suite (`eval`, `score`, `data check`, `data fetch`) take repeatable
`-S KEY=VALUE` (long form `--suite-option`); the suite's settings model validates the values
(`expvid suites show NAME` lists them). The per-suite flags of earlier releases (`--variant`,
`--keep-times`, `--frame-preset`, `--language`, `--bertscore`, `--human-judgments`,
`--judge-input`, `--with-asr`) still work for one release: they are rewritten into `-S` before the
command line is parsed, with a one-line deprecation notice saying what to write instead.

`SuiteCommand` is the Click command class that does the rewriting and, for `--suite NAME --help`,
prints the suite's settings under the command's own help. This module imports only Typer and
Click: help must start fast (tests/cli/test_startup.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer._click.exceptions import UsageError
from typer.core import TyperCommand

from expvid.suites.defaults import DEFAULT_SUITE

if TYPE_CHECKING:  # Typer carries its own copy of Click
    from typer._click import Context, HelpFormatter

SUITE_OPTION_HELP = "Suite setting KEY=VALUE, repeatable (`expvid suites show NAME` lists them)."


@dataclass(frozen=True)
class DeprecatedFlag:
    """An old per-suite flag and the setting it stands for (None: `--variant`, KEY[=VALUE] pairs)."""

    key: str | None
    takes_value: bool = True


DEPRECATED_FLAGS: dict[str, DeprecatedFlag] = {
    "--variant": DeprecatedFlag(None),
    "--keep-times": DeprecatedFlag("keep_times", takes_value=False),
    "--with-asr": DeprecatedFlag("with_asr", takes_value=False),
    "--frame-preset": DeprecatedFlag("frame_preset"),
    "--language": DeprecatedFlag("language"),
    "--bertscore": DeprecatedFlag("bertscore"),
    "--human-judgments": DeprecatedFlag("human_judgments"),
    "--judge-input": DeprecatedFlag("judge_input"),
}


def rewrite_deprecated(args: list[str], flags: dict[str, DeprecatedFlag]) -> tuple[list[str], list[str]]:
    """`args` with every deprecated flag of `flags` turned into `-S KEY=VALUE`, and one notice per flag."""
    rewritten: list[str] = []
    notices: list[str] = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == "--":
            rewritten += args[position - 1 :]
            break
        name, equals, inline = arg.partition("=")
        flag = flags.get(name)
        if flag is None:
            rewritten.append(arg)
            continue
        if not flag.takes_value:
            pairs = [f"{flag.key}=true"]
        else:
            if equals:
                value = inline
            elif position < len(args):
                value = args[position]
                position += 1
            else:
                raise UsageError(f"Option '{name}' requires an argument.")
            pairs = _variant_pairs(value) if flag.key is None else [f"{flag.key}={value}"]
        for pair in pairs:
            rewritten += ["-S", pair]
        notices.append(
            f"warning: {name} is deprecated and will be removed; write "
            + " ".join(f"-S {pair}" for pair in pairs)
        )
    return rewritten, notices


def _variant_pairs(value: str) -> list[str]:
    """`--variant cot,post_prompt=gpt4v` -> ["cot=true", "post_prompt=gpt4v"]."""
    pairs = []
    for part in (p.strip() for p in value.split(",")):
        if part:
            pairs.append(part if "=" in part else f"{part}=true")
    return pairs


def suite_named(args: list[str]) -> str | None:
    """The value of `--suite` on a command line (before it is parsed), if any."""
    for position, arg in enumerate(args):
        if arg == "--suite" and position + 1 < len(args):
            return args[position + 1]
        if arg.startswith("--suite="):
            return arg.partition("=")[2]
    return None


class SuiteCommand(TyperCommand):
    """A command taking `-S`: old per-suite flags rewritten, and `--suite NAME --help` listing settings."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        args, notices = rewrite_deprecated(list(args), DEPRECATED_FLAGS)
        for notice in notices:
            typer.echo(notice, err=True)
        ctx.meta["expvid_suite"] = suite_named(args)
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        name = ctx.meta.get("expvid_suite")
        if name:  # printed as written: each setting's lines stay whole whatever the terminal width
            formatter.write_paragraph()
            formatter.write(settings_listing(str(name)) + "\n")


def settings_listing(name: str) -> str:
    """A suite's settings as `expvid suites show` prints them (loads the suite)."""
    from expvid.cli.suites import describe_suite

    try:
        return describe_suite(name)
    except ValueError as error:
        return f"error: {error}"


def suite_option_flag() -> Any:
    """The `-S/--suite-option` option, for a command's signature (its pairs checked as it is parsed)."""
    return typer.Option(
        "-S", "--suite-option", help=SUITE_OPTION_HELP, metavar="KEY=VALUE", callback=checked_pairs
    )


def checked_pairs(values: list[str] | None) -> list[str] | None:
    """`-S` entries that are KEY=VALUE pairs, each key once; otherwise one line on stderr and exit 2
    (Click's usage error is three lines and a box for what is a typo)."""
    if not values:
        return values
    from expvid.suites.settings import SettingsError, parse_pairs

    try:
        parse_pairs(values or [])
    except SettingsError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    return values


def suite_settings(values: list[str] | None) -> dict[str, object]:
    """The `-S` pairs as the suite's settings; a bad pair is a usage error naming `-S` (exit 2)."""
    from expvid.suites.settings import SettingsError, parse_pairs

    try:
        return dict(parse_pairs(values or []))
    except SettingsError as error:
        raise typer.BadParameter(str(error), param_hint="-S") from None


#: `--suite` of the commands whose `--data` may be a Hub release that names its suite (eval, audit).
SuiteOfData = Annotated[
    str | None,
    typer.Option(
        "--suite",
        help=f"Benchmark suite (default: {DEFAULT_SUITE}, or the suite whose hf: release --data names; "
        "`expvid suites list`). With --help: also its settings.",
    ),
]


__all__ = [
    "DEFAULT_SUITE",
    "DEPRECATED_FLAGS",
    "SuiteCommand",
    "SuiteOfData",
    "rewrite_deprecated",
    "suite_option_flag",
    "suite_settings",
]
