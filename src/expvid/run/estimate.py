"""`expvid eval --dry-run`: what a run will send and cost, per task and in total, before anything is sent.

Nothing is sent and nothing is written (no run directory, no frame or response cache): the data
are loaded and checked as for a run, the same items are selected (and, when the run directory
exists, the ones it already answered are left out, as a resume would), and per request:

- images: how many frames the suite's sampler takes (uniform: its count; fps: from the video's
  length, measured from its packets without decoding) at the size it sends them (a square
  `--size`, or the video's display size scaled to `--max-side`), after the provider's cap on
  images per request (Claude: 100);
- image tokens: by the provider's documented rule for that size (`models.image_tokens`: OpenAI
  tiles or patches, Claude 28 px patches, Gemini tiles, Qwen2-VL 28 px); "unknown" for a
  model without a known rule;
- text tokens: the prompt's messages at ~4 characters per token (English text; an estimate);
- output tokens: the mean measured in this run directory's earlier answers (a pilot with
  `--limit` gives the real figure, reasoning tokens included), else a typical answer length per
  answer type (no reasoning: a reasoning model's first estimate is low; the "max" column, every
  request using its whole `max_tokens`, bounds it);
- USD: at the model's price (`models.pricing`, or `--price`), at the batch discount with `--batch`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PIL import Image
from pydantic import BaseModel, Field

from expvid.media.errors import MediaError
from expvid.media.plan import FramePlan
from expvid.media.sampler import probe
from expvid.media.transform import output_size
from expvid.models.image_tokens import image_tokens
from expvid.models.pricing import BATCH_DISCOUNT, ModelRef, Price, model_ref, price_for
from expvid.models.types import ImagePart, Message, TextPart
from expvid.run.config import EvalConfig
from expvid.run.frames_control import control_sampler
from expvid.run.rundir import RunDir
from expvid.schema import AnswerType, ImagesRef, Item, Prediction, SamplerSettings, VideoRef

#: Characters per token of English prompt text (OpenAI's rule of thumb; an estimate, not a tokenizer).
CHARS_PER_TOKEN = 4.0
#: Typical visible answer length per answer type, in tokens (a non-reasoning model; no pilot yet).
TYPICAL_OUTPUT = {
    AnswerType.CHOICE: 150,
    AnswerType.STEP_NUMBER: 150,
    AnswerType.STEP_SEQUENCE: 200,
    AnswerType.BLANKS: 250,
    AnswerType.FREE_TEXT: 400,
    AnswerType.BOXES: 150,
}


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class TaskEstimate(BaseModel):
    task: str
    items: int = 0
    requests: int = 0
    images: int = 0
    #: None when the model has no known image rule (then not in `input_tokens` either).
    image_tokens: int | None = 0
    text_tokens: int = 0
    output_tokens: int = 0
    output_max: int = 0
    usd: float | None = None
    usd_max: float | None = None
    #: "224x224" -> frames of that size.
    frame_sizes: dict[str, int] = Field(default_factory=dict)
    #: Items whose media are missing or unreadable (they will fail without a request).
    media_problems: int = 0
    output_basis: str = "typical"

    @property
    def input_tokens(self) -> int:
        return self.text_tokens + (self.image_tokens or 0)


class RunEstimate(BaseModel):
    suite: str
    model: str
    provider: str
    price: Price | None
    batch: bool = False
    image_rule: str | None = None
    tasks: list[TaskEstimate]
    total: TaskEstimate
    already_answered: int = 0
    notes: list[str] = Field(default_factory=list)


@dataclass
class _Shape:
    """What one request looks like: image sizes and text tokens."""

    sizes: list[tuple[int, int]]
    text: int


def _frames_of(item: Item, settings: SamplerSettings) -> list[tuple[int, int]]:
    """The (width, height) of every frame the sampler sends for a video item (no decoding)."""
    assert isinstance(item.media, VideoRef)
    media = item.media
    needs_probe = settings.strategy != "uniform" or settings.size is None or settings.max_side is not None
    info = probe(media.path) if needs_probe else None
    if settings.strategy == "uniform":
        count = settings.num_frames or 0
    else:
        assert info is not None
        plan = FramePlan.build(
            fps=settings.fps,
            max_frames=settings.max_frames,
            thinning="keep_last" if settings.strategy == "fps_keep_last" else "uniform",
            start=media.start,
            end=media.end,
        )
        count = len(plan.targets(info.start, info.end))
    if settings.max_side is None and settings.size is not None:
        size = (settings.size, settings.size)
    else:
        assert info is not None
        size = output_size(info.width, info.height, size=settings.size, max_side=settings.max_side)
    return [size] * count


def _images_of(media: ImagesRef) -> list[tuple[int, int]]:
    sizes = []
    for path in media.paths:
        with Image.open(path) as image:
            sizes.append(image.size)
    return sizes


def measured_outputs(
    predictions: dict[tuple[str, int], Prediction], separate_reasoning: bool
) -> dict[str, float]:
    """Mean output tokens per task over the run directory's answers that reported usage."""
    totals: dict[str, list[int]] = defaultdict(list)
    for prediction in predictions.values():
        usage = prediction.usage
        if prediction.ok and usage is not None and usage.completion_tokens is not None:
            extra = (usage.reasoning_tokens or 0) if separate_reasoning else 0
            totals[prediction.task].append(usage.completion_tokens + extra)
    return {task: sum(values) / len(values) for task, values in totals.items() if values}


def estimate_items(
    *,
    items: Sequence[Item],
    todo: Sequence[tuple[Item, int]],
    shape_of: Callable[[Item], _Shape],
    ref: ModelRef,
    price: Price | None,
    max_tokens: int,
    measured: dict[str, float],
    batch: bool,
    detail: str = "auto",
) -> tuple[list[TaskEstimate], list[str]]:
    by_task: dict[str, TaskEstimate] = {}
    notes: list[str] = []
    rules: set[str] = set()
    shapes: dict[str, _Shape | None] = {}
    for item in items:
        by_task.setdefault(item.task, TaskEstimate(task=item.task)).items += 1
    discount = BATCH_DISCOUNT if batch else 1.0
    for item, _sample in todo:
        estimate = by_task[item.task]
        if item.id not in shapes:
            try:
                shapes[item.id] = shape_of(item)
            except (MediaError, OSError) as error:
                shapes[item.id] = None
                notes.append(f"{item.id}: media not readable ({error}); it will fail without a request")
        shape = shapes[item.id]
        if shape is None:
            estimate.media_problems += 1
            continue
        estimate.requests += 1
        estimate.images += len(shape.sizes)
        estimate.text_tokens += shape.text
        image_total: int | None = 0
        for width, height in shape.sizes:
            key = f"{width}x{height}"
            estimate.frame_sizes[key] = estimate.frame_sizes.get(key, 0) + 1
            cost = image_tokens(ref, width, height, detail)
            if cost is None:
                image_total = None
            elif image_total is not None:
                image_total += cost.tokens
                rules.add(cost.rule.split(":")[0])
        if image_total is None or estimate.image_tokens is None:
            estimate.image_tokens = None
        else:
            estimate.image_tokens += image_total
        output = measured.get(item.task)
        estimate.output_basis = "measured" if output is not None else "typical"
        typical = TYPICAL_OUTPUT.get(item.answer_type, 200)
        expected_out = min(max_tokens, round(output if output is not None else typical))
        estimate.output_tokens += expected_out
        estimate.output_max += max_tokens
        if price is not None:
            prompt = shape.text + (image_total or 0)
            usd = price.cost(prompt, expected_out) * discount
            usd_max = price.cost(prompt, max_tokens) * discount
            estimate.usd = (estimate.usd or 0.0) + usd
            estimate.usd_max = (estimate.usd_max or 0.0) + usd_max
    if len(notes) > 5:
        notes = [*notes[:5], f"... and {len(notes) - 5} more item(s) with unreadable media"]
    return list(by_task.values()), notes


def total_of(tasks: Sequence[TaskEstimate]) -> TaskEstimate:
    total = TaskEstimate(task="total")
    unknown_images = any(task.image_tokens is None and task.images for task in tasks)
    for task in tasks:
        total.items += task.items
        total.requests += task.requests
        total.images += task.images
        total.text_tokens += task.text_tokens
        total.output_tokens += task.output_tokens
        total.output_max += task.output_max
        total.media_problems += task.media_problems
        if total.image_tokens is not None:
            total.image_tokens = None if unknown_images else total.image_tokens + (task.image_tokens or 0)
        for size, n in task.frame_sizes.items():
            total.frame_sizes[size] = total.frame_sizes.get(size, 0) + n
        for field_name in ("usd", "usd_max"):
            value = getattr(task, field_name)
            if value is not None:
                setattr(total, field_name, (getattr(total, field_name) or 0.0) + value)
    total.output_basis = "+".join(sorted({task.output_basis for task in tasks if task.requests})) or "-"
    return total


def shape_function(
    suite: object, frames_of: Callable[[Item], SamplerSettings | None]
) -> Callable[[Item], _Shape]:
    """How to measure an item's request without decoding a frame."""

    def shape(item: Item) -> _Shape:
        media = item.media
        if isinstance(media, VideoRef):
            settings = frames_of(item)
            sizes = _frames_of(item, settings) if settings is not None else []
        elif isinstance(media, ImagesRef):
            sizes = _images_of(media)
        else:
            sizes = []
        placeholders = [ImagePart(data=b"") for _ in sizes]
        messages: list[Message] = suite.messages(item, placeholders)  # type: ignore[attr-defined]
        text = sum(
            text_tokens(part.text) for m in messages for part in m.content if isinstance(part, TextPart)
        )
        return _Shape(sizes=sizes, text=text + 4 * len(messages))

    return shape


def estimate_run(config: EvalConfig) -> RunEstimate:
    """The dry run of `config` (see the module docstring); reads data and media headers only."""
    from expvid.models.anthropic_backend import CLAUDE_IMAGE_LIMIT
    from expvid.run.evaluate import (
        generation_defaults,
        make_suite,
        refuse_uncountable,
        resolve_frames,
        select_records,
    )
    from expvid.run.run_lock import check_out_folder

    check_out_folder(config.out)  # a folder that is not a run is refused here too
    suite = make_suite(config)
    config = config.model_copy(update={"frames": resolve_frames(suite, config.frames)})
    dataset = suite.load(config.data, strict=config.strict)
    refuse_uncountable(dataset, config.tasks)
    selection = select_records(dataset, config.tasks, config.limit)
    items = selection.items
    base_url = config.backend_options.get("base_url")
    ref = model_ref(config.model, base_url if isinstance(base_url, str) else None)
    detail = str(config.backend_options.get("image_detail") or "auto")
    price = price_for(config.model, config.prices, base_url if isinstance(base_url, str) else None)
    notes: list[str] = []
    frames = config.frames
    blind = config.effective_frames_control == "none"
    if ref.provider == "anthropic" and not blind:
        cap = CLAUDE_IMAGE_LIMIT.max_images
        if frames.max_images is None or frames.max_images > cap:
            frames = frames.model_copy(update={"max_images": cap})
            notes.append(f"frames capped at {cap} per request ({CLAUDE_IMAGE_LIMIT.source})")
    defaults = generation_defaults(suite)
    max_tokens = defaults.max_tokens if config.max_tokens is None else config.max_tokens
    rundir = RunDir(config.out)
    done = rundir.predictions() if rundir.predictions_path.is_file() else {}
    todo = [
        (item, sample)
        for item in items
        for sample in range(config.samples)
        if (item.id, sample) not in done or (config.retry_failed and not done[(item.id, sample)].ok)
    ]
    measured = measured_outputs(done, price is not None and price.reasoning_separate)
    control = config.effective_frames_control
    shape = shape_function(suite, lambda item: control_sampler(suite.sampler(item, frames), control))
    if blind:
        inner = shape
        shape = lambda item: _Shape(sizes=[], text=inner(item).text)  # noqa: E731
    tasks, item_notes = estimate_items(
        items=items,
        todo=todo,
        shape_of=shape,
        ref=ref,
        price=price,
        max_tokens=max_tokens,
        measured=measured,
        batch=config.batch is not None,
        detail=detail,
    )
    order = {spec.name: i for i, spec in enumerate(suite.tasks)}
    tasks.sort(key=lambda task: order.get(task.task, len(order)))
    total = total_of(tasks)
    rule = None
    sample_size = next(iter(Counter(total.frame_sizes).most_common(1)), None)
    if sample_size is not None:
        width, height = (int(v) for v in sample_size[0].split("x"))
        cost = image_tokens(ref, width, height, detail)
        rule = (
            f"{cost.rule}: {cost.tokens} tokens per {width}x{height} frame"
            if cost is not None
            else f"no documented image-token rule known for {ref.model}; image tokens not estimated"
        )
        if cost is not None and detail == "auto" and cost.rule.startswith("OpenAI tiles"):
            notes.append(
                "image detail 'auto' (none sent): OpenAI may serve a frame at low detail, so the image "
                "tokens are an upper bound; --image-detail high (or low) sends it and makes them exact"
            )
    if price is None:
        notes.append(
            f"no price known for {config.model} ({ref.provider}); give --price IN,OUT (USD per 1M tokens) "
            "for a cost"
        )
    if any(task.output_basis == "typical" for task in tasks if task.requests):
        notes.append(
            "output tokens are a typical answer length (no answers in this run directory yet): run a pilot "
            "with --limit first for measured figures (reasoning models write far more); 'max' assumes every "
            "request uses its whole max_tokens"
        )
    notes.append(
        f"text tokens at ~{CHARS_PER_TOKEN:g} characters per token (an estimate, not the provider's tokenizer)"
    )
    if done:
        notes.append(
            f"{len(items) * config.samples - len(todo)} request(s) already answered in {config.out} are left out"
        )
    return RunEstimate(
        suite=suite.name,
        model=config.model,
        provider=ref.provider,
        price=price,
        batch=config.batch is not None,
        image_rule=rule,
        tasks=tasks,
        total=total,
        already_answered=len(items) * config.samples - len(todo),
        notes=notes + item_notes,
    )


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f}" if value >= 1 else f"{value:.4f}"


def estimate_markdown(estimate: RunEstimate) -> str:
    price = "no price" if estimate.price is None else f"{estimate.price.label()} ({estimate.price.source})"
    batch = f"; batch API at {1 - BATCH_DISCOUNT:.0%} off" if estimate.batch else ""
    lines = [
        f"Dry run: {estimate.model} on {estimate.suite}; {price}{batch}. Nothing was sent or written.",
        "",
        "| task | items | requests | images | image tokens | text tokens | output tokens (est.) | output (max) | est. USD | max USD |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for task in [*estimate.tasks, estimate.total]:
        image = "unknown" if task.image_tokens is None else str(task.image_tokens)
        name = f"**{task.task}**" if task.task == "total" else task.task
        lines.append(
            f"| {name} | {task.items} | {task.requests} | {task.images} | {image} | {task.text_tokens} | "
            f"{task.output_tokens} | {task.output_max} | {_usd(task.usd)} | {_usd(task.usd_max)} |"
        )
    lines.append("")
    if estimate.image_rule:
        lines.append(f"- image tokens: {estimate.image_rule}")
    sizes = ", ".join(f"{size} x{n}" for size, n in sorted(estimate.total.frame_sizes.items()))
    if sizes:
        lines.append(f"- frames sent: {sizes}")
    lines += [f"- {note}" for note in estimate.notes]
    return "\n".join(lines) + "\n"
