"""Settings of `expvid build --recipe promqa`, with the paper's and the official code's values.

The settings shared with the ExpVid build (model, prices, attempts, concurrency, seed, ...) come
from `expvid build`'s own flags; the recipe's own come as `-R KEY=VALUE` (`RecipeOptions`):

| key | default | what |
| --- | --- | --- |
| `template` | step-target | prompt template(s), comma-separated (Table 6: step-target, step-dot, step-image, video-target, video-dot, video-image) |
| `generator` | (none) | another generator model spec, repeatable (Table 7); `--llm` is the first |
| `corrections` | (none) | hand corrections of the annotations: `promqa` (ProMQA's own, `corrections/promqa.yaml`) or a file in that format (`corrections.py`) |
| `require_4k` | false | keep only recordings CaptainCook4D publishes in 4K, as ProMQA did (`availability.py`) |
| `download_links` | found under SOURCES | CaptainCook4D downloader's `metadata/download_links.json`, for `require_4k` |
| `parser` | tolerant | how replies are read: `tolerant` (bullets, tags, CRLF, ... as models write them) or `official` (the official regular expression; `parsing.py`) |
| `next`, `missing`, `others` | 200, 200, 20 | examples wanted per type (B.1); `count.TYPE=N` for one type |
| `sample` | true | false keeps every example (a small corpus) |
| `max_answers`, `max_error_steps` | 5, 5 | sampling skips examples with more target steps / erroneous steps |
| `min_seconds`, `overlap_margin` | 5, 2 | B.1's skip rules |
| `frames`, `max_side` | 50, 1360 | frames of the video templates (1 fps, the last kept) and their size |
| `price.N` | `--price llm` | USD per 1M tokens IN,OUT for generator N (2, 3, ...) |
| `human_minutes_per_qa` | 4.8 | Table 5's full-human estimate: 50 QAs written in 4 hours (A.3) |
| `hourly_rate` | 20 | USD per hour of a person (Table 5) |

Generation as the official `src/generation/run.py`: temperature 0.7, at most 512 new tokens, one
user message (the prompt; frames or the recipe image after it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from expvid.construction.accounting import Price, parse_price
from expvid.construction.recipes.promqa.examples import QUESTION_TYPES, PrefixRules
from expvid.construction.recipes.promqa.parsing import DEFAULT_PARSER, PARSERS
from expvid.construction.recipes.promqa.prompting import DEFAULT_TEMPLATE, TEMPLATES
from expvid.construction.recipes.promqa.sampling import SamplingSettings

#: The official generation settings (src/generation/run.py).
GENERATION_TEMPERATURE = 0.7
GENERATION_MAX_TOKENS = 512
#: The suite that reads this recipe's output (`expvid eval --suite promqa`); the audit gate reads it with it.
RELEASE_SUITE = "promqa"


class CostSettings(BaseModel):
    """Table 5: a person writing QA pairs from scratch, and what an hour of a person costs."""

    model_config = ConfigDict(frozen=True)

    #: One annotator wrote 50 next-type QAs in about 4 hours (A.3, Table 5).
    human_minutes_per_qa: float = Field(default=4 * 60 / 50, gt=0)
    hourly_rate: float = Field(default=20.0, ge=0)


class PromqaBuildConfig(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    sources: Path
    out: Path
    #: Generator model specs; the first is `--llm`.
    generators: tuple[str, ...]
    templates: tuple[str, ...] = (DEFAULT_TEMPLATE,)
    #: How generation replies are read (`parsing.PARSERS`).
    parser: str = DEFAULT_PARSER
    #: Hand corrections of the annotations: a shipped name ("promqa") or a file (`corrections.py`).
    corrections: str | None = None
    #: Keep only recordings published in 4K (ProMQA's filter), from the downloader's links file.
    require_4k: bool = False
    download_links: Path | None = None
    backend_options: dict[str, Any] = Field(default_factory=dict)
    #: Role ("llm", "llm2", ...) -> price.
    prices: dict[str, Price] = Field(default_factory=dict)
    sampling: SamplingSettings = SamplingSettings()
    rules: PrefixRules = PrefixRules()
    temperature: float = GENERATION_TEMPERATURE
    max_tokens: int = GENERATION_MAX_TOKENS
    max_attempts: int = Field(default=3, ge=1)
    concurrency: int = Field(default=8, ge=1)
    seed: int = 0
    #: Video templates: at most this many frames at 1 fps, the last one kept, longest side in px.
    frames: int = Field(default=50, ge=1)
    max_side: int = Field(default=1360, ge=16)
    retry_failed: bool = True
    preset: str = "veryfast"
    crf: int = 23
    cost: CostSettings = CostSettings()

    @field_validator("templates")
    @classmethod
    def _known_templates(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [t for t in value if t not in TEMPLATES]
        if unknown or not value:
            raise ValueError(f"unknown template(s) {unknown}; templates: {', '.join(TEMPLATES)}")
        return value

    @field_validator("parser")
    @classmethod
    def _known_parser(cls, value: str) -> str:
        if value not in PARSERS:
            raise ValueError(f"unknown parser {value!r}; parsers: {', '.join(PARSERS)}")
        return value

    @property
    def combinations(self) -> list[tuple[str, str, str]]:
        """(template, generator spec, ledger role) of every generation asked per example."""
        return [
            (template, spec, role_of(index))
            for index, spec in enumerate(self.generators)
            for template in self.templates
        ]


def role_of(index: int) -> str:
    """Ledger role of generator `index` (0-based): llm, llm2, llm3, ..."""
    return "llm" if index == 0 else f"llm{index + 1}"


class RecipeOptionError(ValueError):
    """A `-R KEY=VALUE` the recipe does not take, or a value it cannot use (named in the message)."""


_INT_KEYS = {"next", "missing", "others", "max_answers", "max_error_steps", "frames", "max_side"}
_FLOAT_KEYS = {"min_seconds", "overlap_margin", "human_minutes_per_qa", "hourly_rate"}


def _bool(key: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise RecipeOptionError(f"-R {key}: expected true or false, got {text!r}")


def recipe_options(pairs: list[str] | None) -> dict[str, Any]:
    """`-R KEY=VALUE` list -> a dict of parsed settings (see the module table); errors name the pair."""
    parsed: dict[str, Any] = {"generators": [], "count": {}, "prices": {}}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise RecipeOptionError(f"-R {pair!r}: expected KEY=VALUE")
        try:
            if key == "template":
                parsed["templates"] = tuple(t.strip() for t in value.split(",") if t.strip())
            elif key == "generator":
                parsed["generators"].append(value)
            elif key == "parser":
                if value not in PARSERS:
                    raise RecipeOptionError(
                        f"-R parser: unknown parser {value!r}; parsers: {', '.join(PARSERS)}"
                    )
                parsed["parser"] = value
            elif key.startswith("count."):
                kind = key.removeprefix("count.")
                if kind not in QUESTION_TYPES:
                    raise RecipeOptionError(
                        f"-R {key}: unknown question type; types: {', '.join(QUESTION_TYPES)}"
                    )
                parsed["count"][kind] = int(value)
            elif key.startswith("price."):
                number = int(key.removeprefix("price."))
                if number < 2:
                    raise RecipeOptionError(f"-R {key}: generator 1 is priced by --price llm=IN,OUT")
                _, price = parse_price(value)
                parsed["prices"][role_of(number - 1)] = price
            elif key in ("sample", "require_4k"):
                parsed[key] = _bool(key, value)
            elif key == "corrections":
                parsed[key] = value
            elif key == "download_links":
                parsed[key] = Path(value).expanduser()
            elif key in _INT_KEYS:
                parsed[key] = int(value)
            elif key in _FLOAT_KEYS:
                parsed[key] = float(value)
            else:
                known = [
                    "template",
                    "generator",
                    "parser",
                    "corrections",
                    "require_4k",
                    "download_links",
                    "count.TYPE",
                    "price.N",
                    "sample",
                    *sorted(_INT_KEYS | _FLOAT_KEYS),
                ]
                raise RecipeOptionError(
                    f"-R {key}: not a setting of the promqa recipe; settings: {', '.join(known)}"
                )
        except ValueError as error:
            if isinstance(error, RecipeOptionError):
                raise
            raise RecipeOptionError(f"-R {pair!r}: {error}") from None
    return parsed


def build_config(
    *, sources: Path, out: Path, llm: str, options: dict[str, Any], **common: Any
) -> PromqaBuildConfig:
    """The config from `expvid build`'s common settings and the parsed `-R` options."""
    sampling = SamplingSettings(
        next=options.get("next", 200),
        missing=options.get("missing", 200),
        others=options.get("others", 20),
        per_type=options.get("count", {}),
        max_answers=options.get("max_answers", 5),
        max_error_steps=options.get("max_error_steps", 5),
        seed=common.get("seed", 0),
        enabled=options.get("sample", True),
    )
    rules = PrefixRules(
        min_seconds=options.get("min_seconds", 5.0), overlap_margin=options.get("overlap_margin", 2.0)
    )
    cost = CostSettings(
        human_minutes_per_qa=options.get("human_minutes_per_qa", 4 * 60 / 50),
        hourly_rate=options.get("hourly_rate", 20.0),
    )
    generators = (llm, *options.get("generators", []))
    prices = dict(common.pop("prices", {}) or {})
    base = prices.get("llm")
    for index in range(1, len(generators)):
        role = role_of(index)
        if role in options.get("prices", {}):
            prices[role] = options["prices"][role]
        elif base is not None:
            prices[role] = base
    settings: dict[str, Any] = {
        "sources": sources,
        "out": out,
        "generators": generators,
        "sampling": sampling,
        "rules": rules,
        "cost": cost,
        "prices": prices,
        **common,
    }
    if "templates" in options:
        settings["templates"] = options["templates"]
    for key in ("frames", "max_side", "parser", "corrections", "require_4k", "download_links"):
        if key in options:
            settings[key] = options[key]
    try:
        return PromqaBuildConfig(**settings)
    except ValidationError as error:
        raise RecipeOptionError(str(error)) from None
