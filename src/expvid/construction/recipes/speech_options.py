"""Speech-to-text settings of `expvid build`, the same `-R` keys for every recipe that transcribes.

    -R stt=faster-whisper:MODEL_OR_FOLDER | openai:MODEL@URL   engine for videos without a transcript
    -R stt_price=USD_PER_MINUTE  -R stt_language=en  -R stt_api_key_env=VAR  -R stt_beam_size=5

Only Typer is imported at the top: `expvid build --help` stays fast.
"""

from __future__ import annotations

from typing import Any

import typer

STT_KEYS = ("stt", "stt_price", "stt_language", "stt_api_key_env", "stt_beam_size")


def recipe_options(pairs: list[str], keys: tuple[str, ...]) -> dict[str, str]:
    """`KEY=VALUE` pairs of `-R` (dashes in KEY read as underscores); a key not in `keys` is refused."""
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in keys:
            raise typer.BadParameter(
                f"{pair!r}: expected KEY=VALUE with KEY one of {', '.join(keys)}", param_hint="-R"
            )
        values[key] = value.strip()
    return values


def stt_settings(options: dict[str, str]) -> Any:
    """The `SpeechSettings` the `stt*` options give, None without `stt`; a bad value is a one-line
    `typer.BadParameter` naming the key."""
    from pydantic import ValidationError

    from expvid.construction.speech import parse_stt_spec

    extra = sorted(k for k in options if k.startswith("stt_") and k in STT_KEYS)
    if "stt" not in options:
        if extra:
            raise typer.BadParameter(f"{', '.join(extra)} without stt=ENGINE:MODEL", param_hint="-R")
        return None
    try:
        price = float(options["stt_price"]) if "stt_price" in options else None
        beam = int(options["stt_beam_size"]) if "stt_beam_size" in options else None
    except ValueError as error:
        raise typer.BadParameter(f"stt_price / stt_beam_size: {error}", param_hint="-R") from None
    try:
        return parse_stt_spec(
            options["stt"],
            price_per_minute=price,
            language=options.get("stt_language") or None,
            api_key_env=options.get("stt_api_key_env") or None,
            beam_size=beam,
        )
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise typer.BadParameter(f"stt {where}: {first['msg']}", param_hint="-R") from None
    except ValueError as error:
        raise typer.BadParameter(str(error).splitlines()[0], param_hint="-R") from None
