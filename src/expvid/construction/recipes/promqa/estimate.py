"""`expvid build --recipe promqa --dry-run`: calls, tokens and cost per template and generator.

Nothing is sent and nothing is written. The annotations are read, the examples made and sampled
exactly as the build will (same rules, same seed), and every generation prompt is built for real,
so prompt tokens are those of the real prompts (3 characters per token, the ExpVid estimate's rule)
plus, for the video and image templates, an allowance per image. Replies: the mean completion
tokens measured in earlier runs of the directory (`.build/usage.json`) when there are any, else
120 (three short pairs). Re-asks are not counted: the call count is a lower bound when replies
come back unusable.
"""

from __future__ import annotations

import json
from typing import Any

from expvid.construction.recipes.promqa.config import PromqaBuildConfig
from expvid.construction.recipes.promqa.examples import recording_examples
from expvid.construction.recipes.promqa.inputs import load_corpus, recording_videos
from expvid.construction.recipes.promqa.prompting import generation_prompt, uses_frames, uses_recipe_image
from expvid.construction.recipes.promqa.sampling import sample_examples
from expvid.construction.state import STATE_DIR
from expvid.construction.windows import estimate_tokens

TYPICAL_REPLY = 120
#: Tokens an API charges for one frame or recipe image at ProMQA's resolutions (order of magnitude:
#: a 1360 x 765 image is ~1,100 tokens for GPT-4o's tiling).
IMAGE_TOKENS = 1100


def _measured(config: PromqaBuildConfig) -> dict[str, float]:
    path = config.out.expanduser() / STATE_DIR / "usage.json"
    try:
        usage = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v["completion_tokens"] / v["replies"] for k, v in usage.items() if v.get("replies")}


def estimate_promqa(config: PromqaBuildConfig) -> dict[str, Any]:
    corpus = load_corpus(config)
    videos = recording_videos(config, corpus)
    examples = []
    for recording in corpus.recordings:
        if recording.recording_id not in videos:
            continue
        examples += recording_examples(recording, corpus.recipe_for(recording), config.rules).examples
    sampled = sample_examples(examples, config.sampling).samples
    measured = _measured(config)
    rows: dict[str, dict[str, Any]] = {}
    total_cost: float | None = 0.0
    for template, spec, role in config.combinations:
        prompt_tokens = 0
        for example in sampled:
            recipe = corpus.recipes[example.activity_id]
            prompt_tokens += estimate_tokens(generation_prompt(example.record(), recipe, template))
            images = int(uses_recipe_image(template))
            if uses_frames(template):
                images += min(config.frames, int(example.end_seconds) + 1)
            prompt_tokens += images * IMAGE_TOKENS
        reply = measured.get(f"generation:{template}", TYPICAL_REPLY)
        completion = int(reply * len(sampled))
        price = config.prices.get(role)
        cost = None if price is None else round(price.cost(prompt_tokens, completion), 4)
        if cost is None:
            total_cost = None
        elif total_cost is not None:
            total_cost += cost
        rows[f"{template} {spec}"] = {
            "template": template,
            "generator": spec.split("@", 1)[0],
            "role": role,
            "calls": len(sampled),
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "cost": cost,
            "output_basis": "measured" if f"generation:{template}" in measured else "typical",
        }
    return {
        "recordings": len(corpus.recordings),
        "examples": len(examples),
        "sampled": len(sampled),
        "combinations": rows,
        "total": {
            "calls": sum(r["calls"] for r in rows.values()),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows.values()),
            "completion_tokens": sum(r["completion_tokens"] for r in rows.values()),
            "cost": None if total_cost is None else round(total_cost, 4),
        },
        "problems": [str(p) for p in corpus.problems],
        "excluded": dict(sorted(corpus.excluded.items())),
        "corrections": None if corpus.corrections is None else corpus.corrections.as_dict(),
    }


def estimate_markdown(estimate: dict[str, Any]) -> str:
    lines = [
        f"Dry run: {estimate['recordings']} recording(s), {estimate['examples']} example(s), "
        f"{estimate['sampled']} sampled. No model was asked.",
        "",
        "| template | generator | role | calls | tokens in | tokens out | est. USD | output tokens |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    total = {**estimate["total"], "template": "total", "generator": "", "role": "", "output_basis": ""}
    for row in [*estimate["combinations"].values(), total]:
        cost = "unknown" if row["cost"] is None else f"{row['cost']:.4f}"
        lines.append(
            f"| {row['template']} | {row['generator']} | {row['role']} | {row['calls']} | {row['prompt_tokens']} | "
            f"{row['completion_tokens']} | {cost} | {row['output_basis']} |"
        )
    lines += [f"- not read: {p}" for p in estimate["problems"]]
    lines += [f"- left out: {recording}: {why}" for recording, why in estimate["excluded"].items()]
    if estimate["corrections"] is not None:
        fixes = estimate["corrections"]
        lines.append(f"- corrections: {fixes['applied']} applied from {fixes['file']}")
        lines += [f"- correction not applied: {p}" for p in fixes["not_applied"]]
    return "\n".join(lines) + "\n"
