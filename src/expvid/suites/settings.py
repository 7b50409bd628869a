"""Suite settings: one typed model per suite, set from the command line as `-S KEY=VALUE`.

A suite declares what a user may change about how it is run (a prompt variant, a language, a
judge protocol) as a pydantic model derived from `SuiteSettings`, each field made with `setting()`
so that it carries its help text, the paper section or official code it comes from, and whether
it changes only how answers are scored. That one model is then:

- the validator of `expvid eval -S KEY=VALUE` (values arrive as text; pydantic converts them, a
  bad value or an unknown key is refused with one line naming the key);
- the documentation (`expvid suites show NAME`, `expvid eval --suite NAME --help`);
- the record: every run's manifest holds the resolved settings (defaults filled in), and the
  settings that can change an answer are part of the resume identity; scoring-only settings
  (which judge input, which BERTScore model) may change on `expvid score` and are recorded with
  the scores instead.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, ClassVar, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo


class SettingsError(ValueError):
    """A suite setting that does not exist or does not validate; the message is one line."""


def setting(
    default: Any,
    *,
    help: str,
    paper: str | None = None,
    scoring: bool = False,
    **bounds: Any,
) -> Any:
    """A suite setting: its default, what it does (`help`), where the paper or its code fixes it
    (`paper`), and whether it only changes how answers are scored (`scoring`: not part of the resume
    identity, may be changed by `expvid score -S`). `bounds` are pydantic's numeric constraints
    (`ge=0, le=2`): `-S judge_temperature=-3` is then refused with one line naming the range."""
    unknown = sorted(set(bounds) - _BOUNDS)
    if unknown:
        raise TypeError(f"setting() takes the bounds {', '.join(sorted(_BOUNDS))}, not {unknown}")
    return Field(default, description=help, json_schema_extra={"paper": paper, "scoring": scoring}, **bounds)


_BOUNDS = frozenset({"ge", "gt", "le", "lt", "min_length", "max_length"})


class SuiteSettings(BaseModel):
    """Base of every suite's settings model (a suite without settings uses it as is)."""

    # No setting is ever NaN or infinite (`-S judge_temperature=nan` would reach the provider).
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False)

    #: Old spellings still accepted (a key renamed, or a value of the old form): key -> new key.
    renamed: ClassVar[dict[str, str]] = {}
    #: The names a `frame_preset` setting may take (a suite's `frame_presets`), checked on validation.
    frame_presets: ClassVar[Mapping[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _text_lists(cls, data: Any) -> Any:
        """`-S tasks=a,b` gives text; a list- or tuple-typed setting takes it split at commas."""
        if not isinstance(data, Mapping):
            return data
        values = dict(data)
        for name, info in cls.model_fields.items():
            if isinstance(values.get(name), str) and _is_sequence(info.annotation):
                values[name] = [part.strip() for part in values[name].split(",") if part.strip()]
        return values

    @field_validator("frame_preset", check_fields=False)
    @classmethod
    def _known_frame_preset(cls, value: Any) -> Any:
        """A suite's `frame_preset` setting names one of its `frame_presets` (lower-cased)."""
        return check_preset(value, cls.frame_presets) if isinstance(value, str) else value

    # -- building ---------------------------------------------------------------------------------

    @classmethod
    def parse(cls, values: SuiteSettings | Mapping[str, Any] | None, *, suite: str = "suite") -> Any:
        """The settings from `values` (KEY -> value, text or typed), or `SettingsError` naming the key."""
        if isinstance(values, cls):
            return values
        if isinstance(values, SuiteSettings):
            values = values.model_dump()
        given: dict[str, Any] = {}
        for key, value in dict(values or {}).items():
            name = cls.renamed.get(str(key), str(key))
            if name in given and given[name] != value:  # an old and a new spelling of one setting
                raise SettingsError(
                    f"{suite} setting {name} given twice ({given[name]!r}, then {value!r}); give it once"
                )
            given[name] = value
        unknown = sorted(set(given) - set(cls.model_fields))
        if unknown:
            raise SettingsError(_unknown_message(suite, unknown[0], list(cls.model_fields)))
        try:
            return cls.model_validate(given)
        except ValidationError as error:
            raise SettingsError(_validation_message(suite, error, given)) from None

    @classmethod
    def upgrade(cls, recorded: dict[str, Any]) -> dict[str, Any]:
        """Settings recorded by a run made before this model had all its settings, as they were then
        in effect (a setting added later whose default differs from what runs did before says so here)."""
        return recorded

    # -- views ------------------------------------------------------------------------------------

    @classmethod
    def scoring_keys(cls) -> frozenset[str]:
        """Settings that only change how answers are scored (not compared on resume)."""
        return frozenset(name for name, info in cls.model_fields.items() if _extra(info).get("scoring"))

    def recorded(self) -> dict[str, Any]:
        """Every setting, resolved, as JSON values: what the manifest records."""
        return self.model_dump(mode="json")

    def identity(self) -> dict[str, Any]:
        """The settings that can change a model's answer (the resume identity's part)."""
        return self.model_dump(mode="json", exclude=set(self.scoring_keys()))


@dataclass(frozen=True)
class SettingInfo:
    """One setting as `expvid suites show` prints it."""

    key: str
    type: str
    default: Any
    choices: tuple[str, ...]
    help: str
    paper: str | None
    scoring: bool


def describe_settings(model: type[SuiteSettings]) -> list[SettingInfo]:
    """Every setting of `model`, in declaration order."""
    infos = []
    for name, info in model.model_fields.items():
        extra = _extra(info)
        infos.append(
            SettingInfo(
                key=name,
                type=_type_name(info.annotation),
                default=info.get_default(call_default_factory=True),
                choices=_choices(info.annotation),
                help=info.description or "",
                paper=extra.get("paper"),
                scoring=bool(extra.get("scoring")),
            )
        )
    return infos


def parse_pairs(entries: Iterable[str], *, flag: str = "-S") -> dict[str, str]:
    """`["language=both", "levels=map.json"]` -> {"language": "both", ...}.

    A key given twice with two values is refused (`SettingsError` naming both): which one a run used
    would otherwise depend on the order of a long command line. The same value twice is accepted."""
    pairs: dict[str, str] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"{flag} expects KEY=VALUE, got {entry!r}")
        key, value = key.strip(), value.strip()
        if key in pairs and pairs[key] != value:
            raise SettingsError(f"{flag} {key} given twice ({pairs[key]!r}, then {value!r}); give it once")
        pairs[key] = value
    return pairs


# -- messages and type names --------------------------------------------------------------------------


def _unknown_message(suite: str, key: str, known: list[str]) -> str:
    near = get_close_matches(key, known, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    listing = ", ".join(known) if known else "none"
    return f"unknown {suite} setting {key!r}{hint}; its settings: {listing} (expvid suites show {suite})"


def _validation_message(suite: str, error: ValidationError, given: Mapping[str, Any]) -> str:
    first = error.errors()[0]
    location = [str(part) for part in first.get("loc", ())]
    message = str(first.get("msg", "invalid value")).replace("\n", " ").removeprefix("Value error, ")
    if not location:  # a rule across settings
        return f"{suite} settings: {message}"
    key = location[0]
    shown = f"={given[key]!r}" if key in given else ""
    return f"{suite} setting {key}{shown}: {message}"


def _extra(info: FieldInfo) -> dict[str, Any]:
    extra = info.json_schema_extra
    return dict(extra) if isinstance(extra, dict) else {}


def _is_sequence(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_sequence(arg) for arg in get_args(annotation) if arg is not type(None))
    return origin in (list, tuple, set, frozenset)


def _choices(annotation: Any) -> tuple[str, ...]:
    origin = get_origin(annotation)
    if origin is Literal:
        return tuple(str(arg) for arg in get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        found: list[str] = []
        for arg in get_args(annotation):
            found += _choices(arg)
        return tuple(found)
    return ()


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return "choice"
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(arg) for arg in get_args(annotation) if arg is not type(None)]
        optional = type(None) in get_args(annotation)
        return " | ".join(dict.fromkeys(names)) + (" | none" if optional else "")
    if origin in (list, tuple, set, frozenset):
        inner = get_args(annotation)
        return f"list of {_type_name(inner[0])}" if inner else "list"
    return getattr(annotation, "__name__", str(annotation)).lower()


def check_preset(value: str | None, presets: Mapping[str, Any]) -> str | None:
    """A `frame_preset` setting's value, lower-cased, when it names one of `presets` (ValueError listing them)."""
    if value is None:
        return None
    key = value.strip().lower()
    if key not in {name.lower() for name in presets}:
        raise ValueError(f"unknown frame preset {value!r}; presets: {', '.join(presets)}")
    return key


def frame_preset_setting(help: str, paper: str) -> Any:
    """The `frame_preset` setting: a paper row's frames (and resolution) by model name; the settings
    model's `frame_presets` lists the names."""
    return setting(None, help=help, paper=paper)


def sampling_setting(paper: str) -> Any:
    """The `sampling` setting of a suite whose official code spreads N frames with linspace (first and
    last frame included) where expvid's strict rule takes the midpoints of N time segments."""
    return setting(
        "official",
        help="official = linspace over the frames, first and last included (how the paper's numbers were "
        "made); strict = midpoints of N equal time segments (ExpVid's rule).",
        paper=paper,
    )
