"""TinyFacts as an expvid build recipe: lab videos, each with the facts it shows, become one
multiple-choice question per fact, written by the build's `--llm`.

Everything comes from `expvid.recipes.api`. Sources: `<id>/video.mp4` and
`<id>/facts.json` ({"discipline", "facts": [{"fact", "answer", "distractors": [3 texts]}]}).
Output (a candidate directory the review platform imports): `facts.jsonl` with the fields the
platform reads (id, video_path, question, options, answer, video_id, category), `videos/`, and
`build_report.json`.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import time
from importlib import resources
from pathlib import Path
from typing import Any

from expvid.recipes.api import (
    BuildRequest,
    BuiltRelease,
    Recipe,
    RecipeError,
    RecipeInput,
    RecipeJudge,
    RecipeSample,
    RecipeSetting,
    ReviewTask,
    ask_model,
    scene_frame,
    write_video,
)

RELEASE_FILE = "facts.jsonl"
LETTERS = "ABCD"
#: The sample's two experiments: what each video shows, and the facts asked about it.
SAMPLE = {
    "stir": ("Biology", [("The buffer is stirred with a glass rod", "a glass rod", ["a spatula", "a pipette", "a magnet"])]),
    "heat": ("Chemistry", [("The flask is heated to 80 degrees", "80 degrees", ["40 degrees", "60 degrees", "100 degrees"])]),
}  # fmt: skip


def prompt(name: str) -> str:
    return resources.files("tinyfacts").joinpath("prompts", name).read_text(encoding="utf-8")


class TinyFactsRecipe(Recipe):
    """Facts shown in lab videos -> one four-option question per fact."""

    name = "tinyfacts"
    title = "TinyFacts: one multiple-choice question per fact a lab video shows"
    paper = "expvid's docs/write-a-recipe.md (an example, not a paper)"
    inputs = (
        RecipeInput("<id>/video.mp4", "the experiment's video"),
        RecipeInput("<id>/facts.json", "its discipline and facts: {fact, answer, distractors}"),
    )
    stages = ("questions",)
    settings = (
        RecipeSetting("per_video", int, 5, "facts asked per video (the first ones)", minimum=1),
        RecipeSetting("shuffle_seed", int, 0, "seed of the option order"),
    )
    review_page = "levels"  # a plain multiple-choice page
    review_tasks = (
        ReviewTask("fact", 5, "Fact question", RELEASE_FILE, n_options=4,
                   note="The answer must be visible in the video; the distractors must be plausible."),
    )  # fmt: skip
    review_level = 5
    export_format = "expvid"
    release_suite = "tinyfacts"
    judges = (RecipeJudge("reviewers", "one person approves, edits or rejects each question"),)

    def build(self, request: BuildRequest) -> BuiltRelease | None:
        request.refuse_flags(("vlm", "levels", "review", "trim_slides"), self.name)
        settings = self.parse_settings(request.options)
        experiments = sorted(path for path in request.sources.expanduser().iterdir() if path.is_dir())
        if not experiments:
            raise RecipeError(f"{request.sources}: no experiment folders", hint="SOURCES_DIR")
        if request.dry_run:
            facts = sum(min(len(_facts(path)), settings["per_video"]) for path in experiments)
            print(f"{facts} model call(s) planned, one per fact")
            return None
        out = request.out.expanduser()
        (out / "videos").mkdir(parents=True, exist_ok=True)
        rng = random.Random(settings["shuffle_seed"])
        records = []
        for path in experiments:
            discipline = json.loads((path / "facts.json").read_text(encoding="utf-8"))["discipline"]
            shutil.copyfile(path / "video.mp4", out / "videos" / f"{path.name}.mp4")
            for number, fact in enumerate(_facts(path)[: settings["per_video"]], start=1):
                text = prompt("question.txt").format(answer=fact["answer"], fact=fact["fact"])
                question = asyncio.run(ask_model(request, text)).strip()
                choices = [fact["answer"], *fact["distractors"][:3]]
                rng.shuffle(choices)
                records.append({
                    "id": f"{path.name}-{number}", "video_path": f"videos/{path.name}.mp4", "question": question,
                    "options": dict(zip(LETTERS, choices, strict=True)),
                    "answer": LETTERS[choices.index(fact["answer"])], "video_id": path.name, "category": discipline,
                })  # fmt: skip
        (out / RELEASE_FILE).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        (out / "build_report.json").write_text(
            json.dumps({"recipe": self.name, "items": len(records)}) + "\n"
        )
        if not request.quiet:
            print(f"{len(records)} question(s) in {out}")
        return BuiltRelease(out=out, suite=self.release_suite, released=len(records))

    def make_sample(self, directory: Path, seed: int, *, force: bool = False) -> RecipeSample:
        started = time.perf_counter()
        sources = Path(directory).expanduser() / "sources"
        if sources.exists() and not force:
            raise RecipeError(f"{sources} exists; pass --force to overwrite it")
        for number, (name, (discipline, facts)) in enumerate(SAMPLE.items()):
            folder = sources / name
            folder.mkdir(parents=True, exist_ok=True)
            frames = (scene_frame(i, 64, 48, seed=seed + number) for i in range(8))
            write_video(folder / "video.mp4", frames, fps=4)
            rows = [{"fact": f, "answer": a, "distractors": d} for f, a, d in facts]
            (folder / "facts.json").write_text(
                json.dumps({"discipline": discipline, "facts": rows}, indent=1)
            )
        return RecipeSample(sources, f"{len(SAMPLE)} videos with their facts", time.perf_counter() - started)


def _facts(path: Path) -> list[dict[str, Any]]:
    try:
        facts = json.loads((path / "facts.json").read_text(encoding="utf-8"))["facts"]
    except (OSError, ValueError, KeyError) as error:
        raise RecipeError(f"{path / 'facts.json'}: {error}") from None
    return list(facts)
