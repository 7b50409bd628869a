"""`--dry-run` of the SciVideoBench recipe: calls, tokens, audio minutes and cost, before anything is paid.

Per experiment: speech-to-text minutes when it has no transcript (0 when its audio is already in
the transcript cache: known from the cache's index without decoding); the QA generator's two calls;
evaluator, comparer and refiner once per question asked for (an upper bound: dropped questions skip
the later roles); the blind audit `blind_samples` per question. Prompt tokens are the filled prompt's
characters / 4 (transcript and paper included; a transcript not made yet is taken as 150 words a
minute) plus `IMAGE_TOKENS` per frame; output tokens are typical reply sizes per role. Replies the
response cache holds are not subtracted: the figures are what a fresh build would cost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expvid.construction.recipes.scivideobench import prompts as recipe_prompts
from expvid.construction.recipes.scivideobench.config import SvbBuildConfig
from expvid.construction.recipes.scivideobench.roles import _exemplars
from expvid.construction.sources import SourceExperiment
from expvid.construction.speech.stage import SpeechStage
from expvid.media.errors import MediaError
from expvid.media.sampler import probe

CHARS_PER_TOKEN = 4
#: A 448-pixel frame (GPT-4o high detail: 765; Gemini: 258; Qwen2.5-VL at 448x252: ~150): a middle value.
IMAGE_TOKENS = 500
#: Typical reply tokens per role (no reasoning tokens: run a pilot for a reasoning model).
OUTPUT_TOKENS = {
    "svb_analysis": 700,
    "svb_generate": 3000,
    "svb_evaluate": 500,
    "svb_compare": 400,
    "svb_refine": 500,
    "blind": 8,
}


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


async def estimate(
    config: SvbBuildConfig,
    exemplars: dict[str, list[dict[str, str]]],
    sources: list[SourceExperiment],
    state: Path,
) -> dict[str, Any]:
    speech = SpeechStage(config.stt, state / "speech") if config.stt else None
    questions = sum(config.per_type.values())
    rows: dict[str, dict[str, float]] = {}
    minutes = cached_minutes = 0.0
    skipped: dict[str, str] = {}

    def add(stage: str, calls: int, prompt: int, completion: int) -> None:
        row = rows.setdefault(stage, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["calls"] += calls
        row["prompt_tokens"] += calls * prompt
        row["completion_tokens"] += calls * completion

    for source in sources:
        if source.video is None:
            skipped[source.video_id] = "no video"
            continue
        try:
            duration = probe(source.video).duration
        except MediaError as error:
            skipped[source.video_id] = str(error)
            continue
        if source.transcript is not None:
            transcript_chars = source.transcript.stat().st_size
        elif speech is not None:
            if speech.cached_path(source.video) is not None:
                cached_minutes += duration / 60
            else:
                minutes += duration / 60
            transcript_chars = int(duration / 60 * 150 * 6)
        else:
            skipped[source.video_id] = "no transcript and no --stt"
            continue
        paper_chars = min(config.paper_chars, source.paper.stat().st_size if source.paper else 0)
        context = transcript_chars + paper_chars
        frames = config.frames * IMAGE_TOKENS
        analysis = recipe_prompts.load("svb_analysis", config.prompts)
        generate = recipe_prompts.load("svb_generate", config.prompts)
        add(
            "svb_generate",
            1,
            _tokens(analysis.user) + context // CHARS_PER_TOKEN,
            OUTPUT_TOKENS["svb_analysis"],
        )
        add(
            "svb_generate",
            1,
            _tokens(generate.user + _exemplars(exemplars, config.per_type))
            + context // CHARS_PER_TOKEN
            + OUTPUT_TOKENS["svb_analysis"],
            OUTPUT_TOKENS["svb_generate"],
        )
        for role, extra in (
            ("svb_evaluate", context // CHARS_PER_TOKEN + frames),
            ("svb_compare", transcript_chars // CHARS_PER_TOKEN + frames + 400),
            ("svb_refine", 600),
        ):
            template = recipe_prompts.load(role, config.prompts)
            add(role, questions, _tokens(template.user) + extra, OUTPUT_TOKENS[role])
        add("blind_audit", questions * config.blind_samples, 350, OUTPUT_TOKENS["blind"])

    def priced(role: str, row: dict[str, float]) -> float | None:
        price = config.prices.get(role) or (
            config.prices.get("llm") if role == "blind" and config.blind_llm in (None, config.llm) else None
        )
        return (
            None
            if price is None
            else round(price.cost(int(row["prompt_tokens"]), int(row["completion_tokens"])), 6)
        )

    stages = {
        stage: {
            **{k: int(v) for k, v in row.items()},
            "cost": priced("blind" if stage == "blind_audit" else "llm", row),
        }
        for stage, row in rows.items()
    }
    speech_cost: float | None = 0.0
    if config.stt is not None and config.stt.remote:
        speech_cost = (
            None if config.stt.price_per_minute is None else round(minutes * config.stt.price_per_minute, 6)
        )
    costs = [s["cost"] for s in stages.values()] + [speech_cost]
    return {
        "recipe": "scivideobench",
        "experiments": len(sources) - len(skipped),
        "skipped": skipped,
        "questions_asked_for": questions * (len(sources) - len(skipped)),
        "stages": stages,
        "speech": {
            "engine": config.stt.describe() if config.stt else None,
            "minutes": round(minutes, 2),
            "cached_minutes": round(cached_minutes, 2),
            "cost": speech_cost,
        },
        "total_cost": None
        if any(c is None for c in costs)
        else round(sum(c for c in costs if c is not None), 6),
        "notes": [
            f"prompt tokens = characters / {CHARS_PER_TOKEN} + {IMAGE_TOKENS} per frame; output tokens are typical reply sizes",
            "evaluator, comparer, refiner and blind audit are counted for every question asked for (an upper bound)",
        ],
    }


def estimate_markdown(estimate: dict[str, Any]) -> str:
    def money(value: float | None) -> str:
        return "unknown (no price)" if value is None else f"${value:.4f}"

    lines = [
        f"# Estimate: SciVideoBench recipe, {estimate['experiments']} experiment(s)",
        "",
        "| stage | calls | input tokens | output tokens | cost |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for stage, row in estimate["stages"].items():
        lines.append(
            f"| {stage} | {row['calls']} | {row['prompt_tokens']} | {row['completion_tokens']} | {money(row['cost'])} |"
        )
    speech = estimate["speech"]
    if speech["engine"]:
        lines.append(
            f"| speech-to-text ({speech['engine']['engine']}) | {speech['minutes']} min "
            f"(+{speech['cached_minutes']} cached) | | | {money(speech['cost'])} |"
        )
    lines += ["", f"Total: {money(estimate['total_cost'])}", ""]
    lines += [f"- {note}" for note in estimate["notes"]]
    lines += [f"- skipped {vid}: {why}" for vid, why in estimate["skipped"].items()]
    return "\n".join(lines) + "\n"
