"""The public recipe API: everything a build-recipe package needs, from one module.

A recipe turns a folder of sources (videos, transcripts, papers, annotations) into a candidate
benchmark that experts review on the platform and that a suite evaluates. A recipe written against
this module alone (the worked example of docs/write-a-recipe.md is) keeps working when expvid's
internals move. A recipe class declares:

- `name`, `title`, `paper`: how `expvid recipes list/show` present it;
- `inputs`: what a sources folder must hold (`RecipeInput`, one per file or folder kind);
- `stages`: its stages in order (the names `expvid build --redo STAGE` takes, where it supports it);
- `settings`: its typed `-R KEY=VALUE` settings (`RecipeSetting`); `parse_settings` reads them with
  one-line errors naming the key;
- `review_page`: the kind of page the review platform shows an item of it on (`REVIEW_PAGES`);
- `export_format`: what `expvid platform export` writes for its verified items;
- `judges`: the judges its release is scored with (names and what they judge);
- `release_suite`: the suite that evaluates its output (`expvid eval --suite SUITE --data OUT`);
- `build(request)`: the build itself (`expvid build SOURCES --recipe NAME --out DIR --llm SPEC`);
- `make_sample(directory, seed, force=...)`: inputs for a try-out (`expvid sample make --recipe NAME`),
  or leave it out;
- helpers: `ask_model(request, prompt)` sends one text prompt to the build's `--llm` with the
  endpoint flags of `expvid build` (`--base-url`, `--api-key-env`, `--timeout`, ...);
  `scene_frame` and `write_video` make synthetic sample videos;
- `review_hooks()`: what the review platform needs beyond the ExpVid release layout (`ReviewHooks`:
  the recipe's own tasks and their guidelines, how to read its candidate files, the extra panel of its
  review page, its release writer, a whole-directory importer or exporter), or None when its
  candidates are in the ExpVid layout (`annotations/level{n}/{task}.jsonl`).

Register the class under the entry-point group `expvid.recipes` in the package's metadata:

    [project.entry-points."expvid.recipes"]
    tinyrecipe = "tinyrecipe.recipe:TinyRecipe"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from expvid.recipes.defaults import ENTRY_POINT_GROUP, REVIEW_PAGES

__all__ = [
    "ENTRY_POINT_GROUP",
    "REVIEW_PAGES",
    "BuildRequest",
    "BuiltRelease",
    "Recipe",
    "RecipeError",
    "RecipeInput",
    "RecipeJudge",
    "RecipeSample",
    "RecipeSetting",
    "RecipeSettingError",
    "ReviewHooks",
    "ReviewTask",
    "ask_model",
    "parse_settings",
    "scene_frame",
    "write_video",
]


class RecipeError(ValueError):
    """A build request the recipe refuses: one line, shown as `--recipe NAME: MESSAGE` (exit 2).
    `hint` names the flag or setting at fault (`--levels`, `-R frames`)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class RecipeSettingError(RecipeError):
    """A `-R KEY=VALUE` setting the recipe does not have, or a value of the wrong type."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message, hint=f"-R {key}")
        self.key = key


@dataclass(frozen=True)
class RecipeInput:
    """One kind of file or folder a sources folder holds (`pattern` relative to SOURCES)."""

    pattern: str
    help: str
    required: bool = True


@dataclass(frozen=True)
class RecipeSetting:
    """One `-R KEY=VALUE` setting: `type` is str, int, float, bool or Path; `choices` limit a str."""

    key: str
    type: type
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    #: Lowest allowed value of an int or float setting.
    minimum: float | None = None

    def parse(self, text: str) -> Any:
        """The value `text` means, or `RecipeSettingError` in one line naming the key."""
        value = text.strip()
        problem = self._problem(value)
        if problem is not None:
            raise RecipeSettingError(self.key, f"-R {self.key}={text}: {problem}")
        if self.type is bool:
            return value.lower() in ("true", "1", "yes")
        if self.type in (int, float):
            return self.type(value)
        if self.type is Path:
            return Path(value).expanduser()
        return value

    def _problem(self, value: str) -> str | None:
        if self.type is bool:
            ok = value.lower() in ("true", "false", "1", "0", "yes", "no")
            return None if ok else "expected true or false"
        if self.type in (int, float):
            try:
                number = self.type(value)
            except ValueError:
                return "expected an integer" if self.type is int else "expected a number"
            if number != number or number in (float("inf"), float("-inf")):
                return "expected a finite number"
            if self.minimum is not None and number < self.minimum:
                return f"must be at least {self.minimum:g}"
            return None
        if self.type is Path and not value:
            return "expected a path"
        if self.choices and value not in self.choices:
            return f"expected one of {', '.join(self.choices)}"
        return None


def parse_settings(pairs: Sequence[str], settings: Sequence[RecipeSetting]) -> dict[str, Any]:
    """`-R KEY=VALUE` pairs -> every declared setting's value (defaults filled in). Dashes in KEY read
    as underscores; an unknown key, a missing `=`, a bad value or a key given twice is a one-line
    `RecipeSettingError` naming the key."""
    declared = {setting.key: setting for setting in settings}
    values = {setting.key: setting.default for setting in settings}
    given: set[str] = set()
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise RecipeSettingError(key, f"-R {pair}: expected KEY=VALUE")
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise RecipeSettingError(key, f"-R {key}: not a setting of this recipe; settings: {known}")
        if key in given:
            raise RecipeSettingError(key, f"-R {key} is given twice; give each setting once")
        given.add(key)
        values[key] = declared[key].parse(text)
    return values


@dataclass(frozen=True)
class RecipeJudge:
    """A judge the recipe's release is scored or checked with: its name and what it decides."""

    name: str
    help: str


@dataclass(frozen=True)
class BuiltRelease:
    """What a recipe's build hands back to `expvid build`, which then runs the audit gate on it."""

    out: Path
    #: The suite that reads the output (`expvid eval --suite SUITE --data OUT`).
    suite: str
    #: Units that failed in this run (the next run asks exactly those again).
    failed_units: int = 0
    #: Items written (none: nothing was released, so there is nothing to audit).
    released: int = 0


@dataclass(frozen=True)
class RecipeSample:
    """What `make_sample` wrote: the sources folder `expvid build` reads, and a one-line summary."""

    sources: Path
    what: str
    seconds: float = 0.0


@dataclass(frozen=True)
class BuildRequest:
    """One `expvid build` command as the recipe receives it.

    `flags` holds every option of `expvid build` by its parameter name (`llm`, `blind_llm`,
    `temperature`, `max_tokens`, `price`, `concurrency`, `seed`, `redo`, `dry_run`, `quiet`, ...);
    `options` the raw `-R` pairs; `defaults` the value each flag has when not given, so that a recipe
    can refuse a flag it does not use (`refuse_flags`) instead of ignoring it silently.
    """

    sources: Path
    out: Path
    llm: str
    options: tuple[str, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def quiet(self) -> bool:
        return bool(self.flags.get("quiet"))

    @property
    def dry_run(self) -> bool:
        return bool(self.flags.get("dry_run"))

    def changed(self, name: str) -> bool:
        """Whether the flag `name` was given a value other than its default."""
        return name in self.flags and self.flags[name] != self.defaults.get(name)

    def refuse_flags(self, names: Sequence[str], recipe: str) -> None:
        """`RecipeError` for the first of `names` given a value: it belongs to another recipe."""
        for name in names:
            if self.changed(name):
                flag = "--" + name.replace("_", "-")
                raise RecipeError(f"{flag} is not used by the {recipe} recipe", hint=flag)


@dataclass(frozen=True)
class ReviewTask:
    """A task of the recipe's candidates that the ExpVid layout does not have, as the review platform
    shows it: `level` groups it (one level per recipe, above ExpVid's 1-3), `kind` is its answer kind
    (`mcq` for now), `file` is where its records are in a candidate directory, `note` the line of
    guidance shown beside each of its items."""

    name: str
    level: int
    title: str
    file: str
    kind: str = "mcq"
    n_options: int | None = None
    note: str = ""


class ReviewHooks:
    """What the review platform asks a recipe whose candidates are not (only) ExpVid's layout.

    Every hook has a neutral default; the platform calls them with its own objects (an `Item` row
    has `task`, `question`, `options`, `answer`, `record`, `provenance`, `video_id`, `video_path`).
    The recipe's tasks and level are declared on the recipe class (`review_tasks`, `review_level`),
    so that listing them does not load the hooks.
    """

    #: The review rules of its level, shown beside each item (the paper's verification criteria).
    level_rules: tuple[str, ...] = ()
    #: How long the paper says a review took (shown as a guide), or "not reported".
    paper_minutes: str = "not reported"

    def read_records(self, root: Path, task: str) -> list[tuple[int, Any]] | None:
        """The records of `task` in the candidate directory `root` as (line, record or problem) pairs
        in the platform's record form (`id`, `video_path`, `question`, `options`, `answer`, `video_id`);
        None reads the task's file as JSON lines."""
        return None

    #: The template (in `Recipe.review_templates`) that lays out `review_panel`'s dict as `panel`.
    panel_template: str | None = None

    def review_panel(self, item: Any, paper: str | None) -> dict[str, Any] | None:
        """What the review page shows beside the question for the page kind `timed-mcq` (times,
        cues, the evaluator's rationale, ...), laid out by `panel_template`; None shows the narration."""
        return None

    def write_release(
        self, release: Path, items: list[Any], roots: dict[int, Path]
    ) -> tuple[Mapping[str, int], list[dict[str, Any]]] | None:
        """Write the verified `items` of the recipe's tasks into the release folder in its own layout;
        the items per task and notes for the internal provenance. None writes the ExpVid layout."""
        return None

    def add_overlay(
        self, db: Any, actor: Any, item: Any, text: str, start: float, end: float, position: str
    ) -> Any:
        """The overlay tool of the page kind `timed-mcq`: record `text` to burn onto the item's released
        video over [start, end); a `ValueError` says which rule a request breaks."""
        raise ValueError("this item's review page has no overlay tool")

    def release_path(self, item: Any) -> str:
        """Where `write_release` put the item's video in the release (relative to it)."""
        return str(item.video_path)

    def claims_directory(self, root: Path) -> bool:
        """Whether `root` is a candidate directory this recipe imports itself (`import_directory`)."""
        return False

    def import_directory(self, database: Any, root: Path, **options: Any) -> Any:
        """Import a directory `claims_directory` accepted (returns the platform's `ImportReport`)."""
        raise NotImplementedError

    def judged_pages(self) -> Any | None:
        """For the page kind `procedural`: the object that draws and takes the judgement and
        adjudication pages of the recipe's items (those at its `review_level`), or None."""
        return None

    def export(self, database: Any, directory: Path, **options: Any) -> list[str]:
        """`expvid platform export DIR --format FORMAT` for the recipe's own `export_format`; the lines
        to print."""
        raise NotImplementedError


class Recipe:
    """Base class of a build recipe; every declaration has a neutral default but `name` and `build`."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    #: The paper (and section) the recipe follows.
    paper: ClassVar[str] = ""
    inputs: ClassVar[tuple[RecipeInput, ...]] = ()
    stages: ClassVar[tuple[str, ...]] = ()
    settings: ClassVar[tuple[RecipeSetting, ...]] = ()
    #: A kind of `REVIEW_PAGES`.
    review_page: ClassVar[str] = "levels"
    #: The `expvid platform export --format` value that writes its verified items.
    export_format: ClassVar[str] = "expvid"
    judges: ClassVar[tuple[RecipeJudge, ...]] = ()
    release_suite: ClassVar[str] = "expvid"
    #: Tasks of its candidates that the ExpVid layout lacks, as the review platform lists them.
    review_tasks: ClassVar[tuple[ReviewTask, ...]] = ()
    #: The platform level of its items when they are not ExpVid's (its `review_tasks`' level, or
    #: the level of the items its judged pages show, page kind `procedural`).
    review_level: ClassVar[int | None] = None
    #: A folder of Jinja templates the recipe ships for its review pages (its panel, its judged
    #: pages); they may extend the platform's `base.html` and include its partials (`_player.html`).
    review_templates: ClassVar[Path | None] = None
    #: A docs page on the recipe (relative to the repository's docs/), for `recipes show`.
    docs: ClassVar[str] = ""

    def parse_settings(self, pairs: Sequence[str]) -> dict[str, Any]:
        """The recipe's `-R` settings, typed (`parse_settings` over `settings`)."""
        return parse_settings(pairs, self.settings)

    def build(self, request: BuildRequest) -> BuiltRelease | None:
        """Build (or with `request.dry_run` estimate) the candidate directory `request.out`; the
        release written, for the audit gate, or None when nothing was released (a dry run)."""
        raise NotImplementedError(f"the {self.name} recipe has no build")

    def review_hooks(self) -> ReviewHooks | None:
        """The platform's hooks for this recipe's candidates; None: they are in the ExpVid layout."""
        return None

    def has_sample(self) -> bool:
        return type(self).make_sample is not Recipe.make_sample

    def make_sample(self, directory: Path, seed: int, *, force: bool = False) -> RecipeSample:
        """Write sources `expvid build --recipe NAME` can read into `directory` (same seed, same files)."""
        raise NotImplementedError(f"the {self.name} recipe has no sample inputs")


async def ask_model(request: BuildRequest, prompt: str, *, spec: str | None = None) -> str:
    """One text prompt to `spec` (default: the build's `--llm`), with `expvid build`'s endpoint
    flags, `--temperature`, `--max-tokens` and `--seed`; the reply's text. A failed call or an empty
    reply is a `RecipeError` naming the model (the build reports it; nothing is guessed)."""
    from expvid.commands.endpoints import endpoint_options_of
    from expvid.models import create_backend
    from expvid.models.types import GenerateRequest, Message, TextPart

    model = spec or request.llm
    backend = create_backend(model, **endpoint_options_of(dict(request.flags)))
    try:
        reply = await backend.generate(
            GenerateRequest(
                messages=[Message(role="user", content=[TextPart(text=prompt)])],
                temperature=float(request.flags.get("temperature", 0.0)),
                max_tokens=int(request.flags.get("max_tokens", 1024)),
                seed=request.flags.get("seed"),
            )
        )
    except Exception as error:  # a transport or provider failure, reported by the recipe's build
        raise RecipeError(f"{model}: {type(error).__name__}: {error}") from None
    finally:
        await backend.aclose()
    if not reply.text:
        raise RecipeError(f"{model}: an empty reply ({reply.refusal or reply.finish_reason or 'no text'})")
    return reply.text


def scene_frame(index: int, width: int, height: int, *, seed: int = 0, fps: float = 30.0) -> Any:
    """A synthetic frame whose top band codes its index (`expvid.media.synth`), for sample videos."""
    from expvid.media.synth import scene_frame as make

    return make(index, width, height, seed=seed, fps=fps)


def write_video(path: Any, frames: Any, *, fps: float, **options: Any) -> Any:
    """Encode `frames` (RGB arrays) as an H.264 video at `path` (`expvid.media.synth.write_video`)."""
    from expvid.media.synth import write_video as write

    return write(path, frames, fps=fps, **options)
