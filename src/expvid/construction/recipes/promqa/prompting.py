"""The QA-generation prompt of ProMQA (section 3.2, B.2; official `src/generation/utils.py`).

A prompt is assembled from the components of `prompts/generation_templates.yaml` (verbatim from the
ProMQA repository) for one template type:

| template | recording given as | recipe given as | Table 6 cell |
| --- | --- | --- | --- |
| `step-target` (the paper's choice) | step descriptions | the on-target excerpt | step / excerpt |
| `step-dot` | step descriptions | the whole recipe as DOT | step / DOT |
| `step-image` | step descriptions | the recipe graph as an image | step / image |
| `video-target` | frames | the on-target excerpt | frames / excerpt |
| `video-dot` | frames | the whole recipe as DOT | frames / DOT |
| `video-image` | frames | the recipe graph as an image | frames / image |

The text is built from the example record alone (activity, previous steps, current step, next or
missing steps, error description) plus, for the error types, the recipe's wording of the current
step; `tests/construction_promqa` rebuilds all 401 released prompts byte for byte. Where the paper's
Figure 12 and the released prompts differ (the Note's bullets, the example's full stops), the
released prompts are what the generator saw, and they are what this module writes. Images (frames,
recipe graph) go after the text in the same user message, as the official code sends them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from expvid.construction.recipes.promqa.graph import RecipeGraph
from expvid.suites.promqa.recipe_dot import recipe_dot

TEMPLATE_FILE = "generation_templates.yaml"
DEFAULT_TEMPLATE = "step-target"


def _template(*own: str, frames: bool, image: bool) -> tuple[tuple[str, ...], bool, bool]:
    """A template type's entry: its component lines (the prefix, its `own` components, then the
    question, constraint, example and suffix every type ends with), whether it uses frames, whether
    it uses the recipe image."""
    return ("prefix", *own, "question", "constraint", "example", "suffix"), frames, image


#: Template type -> (component lines, uses frames, uses the recipe image).
TEMPLATES: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "step-target": _template("step", "target", frames=False, image=False),
    "step-dot": _template("recipe.dot", "step", frames=False, image=False),
    "step-image": _template("recipe.image.wo_video", "step", frames=False, image=True),
    "video-target": _template("video.wo_recipe_image", "target", frames=True, image=False),
    "video-dot": _template("recipe.dot", "video.wo_recipe_image", frames=True, image=False),
    "video-image": _template("recipe.image.w_video", "video.w_recipe_image", frames=True, image=True),
}
#: Table 6's layout: template type -> (recording as, recipe as).
TABLE6_CELLS = {
    "video-dot": ("frames", "DOT"),
    "video-image": ("frames", "image"),
    "video-target": ("frames", "excerpt"),
    "step-dot": ("step", "DOT"),
    "step-image": ("step", "image"),
    "step-target": ("step", "excerpt"),
}


class PromptInputError(ValueError):
    """An example record that lacks what its prompt needs."""


@cache
def components() -> dict[str, Any]:
    import yaml

    text = files("expvid.construction.recipes.promqa").joinpath("prompts", TEMPLATE_FILE).read_text("utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


@cache
def template_sha256(template: str) -> str:
    """Hash of the components a template type uses, for provenance (changes with any wording)."""
    parts = components()
    lines = TEMPLATES[template][0]
    payload = repr([(name, _component(parts, name, None)) for name in lines])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _component(parts: Mapping[str, Any], name: str, kind: str | None) -> Any:
    value: Any = parts
    for key in name.split("."):
        value = value[key]
    if isinstance(value, dict):  # per question type
        return value if kind is None else value[kind]
    return value


def format_steps(steps: list[Mapping[str, Any]]) -> str:
    return "".join(f"- {step['description']}\n" for step in steps).strip()


def step_information(record: Mapping[str, Any]) -> str:
    """What the person did so far: the previous steps and the one just performed."""
    previous = record["previous_steps"]
    current = format_steps([record["current_step"]])
    text = ""
    if len(previous) == 1:
        text += f"The person completed this step:\n{format_steps(previous)}\n"
    elif len(previous) > 1:
        text += f"The person completed these steps:\n{format_steps(previous)}\n"
    if not previous:
        text += f"The person has just performed this step:\n{current}"
    else:
        text += f"And, the person has just performed this step:\n{current}"
    return text


def target_information(record: Mapping[str, Any], recipe_steps: Mapping[str, str]) -> str:
    """The on-target excerpt: next or missing steps, or the error and the recipe's correct step."""
    kind = record["type"]
    if kind == "next":
        steps = record["next_steps"]
        if not steps:
            return "The friend know this is the last step."
        return f"The friend knows the following step(s) can be done next:\n{format_steps(steps)}"
    if kind == "missing":
        steps = record["missing_steps"]
        if not steps:
            return "The friend know there is no missing step."
        if len(steps) == 1:
            return f"The friend knows the following step is missed:\n{format_steps(steps)}"
        return f"The friend knows the following steps are missed:\n{format_steps(steps)}"
    description = record["error_description"]
    if description.startswith("This step does not contain any"):
        return f"The friend knows {description.lower()}"
    text = f"The friend knows that there is an error in the latest action about {kind}: {description}"
    if kind == "order":
        return text
    step_id = str(record["current_step"]["step_id"])
    if step_id not in recipe_steps:
        raise PromptInputError(f"{record.get('question_id')}: step {step_id} is not in the recipe")
    return f"{text}\nAccording to the recipe, the correct action is:\n- {recipe_steps[step_id]}"


def generation_prompt(
    record: Mapping[str, Any], recipe: RecipeGraph, template: str = DEFAULT_TEMPLATE
) -> str:
    """The prompt text for one example record (release keys) and template type."""
    if template not in TEMPLATES:
        raise PromptInputError(f"unknown template {template!r}; templates: {', '.join(TEMPLATES)}")
    kind = record.get("type")
    parts = components()
    if kind not in parts["question"]:
        raise PromptInputError(f"{record.get('question_id')}: unknown question type {kind!r}")
    lines, _frames, _image = TEMPLATES[template]
    text = "\n".join(_component(parts, name, kind) for name in lines)
    text = text.replace("{recipe_name}", record["activity_name"])
    if "{recipe}" in text:
        text = text.replace("{recipe}", recipe_dot(recipe.to_release()))
    if "{step_information}" in text:
        text = text.replace("{step_information}", step_information(record))
    if "{target_information}" in text:
        steps = {str(k): v for k, v in recipe.steps.items()}
        text = text.replace("{target_information}", target_information(record, steps))
    return text.strip()


def uses_frames(template: str) -> bool:
    return TEMPLATES[template][1]


def uses_recipe_image(template: str) -> bool:
    return TEMPLATES[template][2]
