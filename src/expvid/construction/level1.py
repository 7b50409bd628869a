"""Level 1 (ExpVid 3.1 and 3.3, appendix G.1): action clips and four-option perception MCQs.

Per experiment:
1. The narration is segmented into timed sentences (`expvid.media.sentences`); each sentence long
   enough for a clip is one unit, its clip the sentence's [start, end).
2. Optional VLM caption of the clip's frames (the paper's "Qwen caption"); without a VLM the prompts
   get "(not available)" and the operation filter cannot check visibility (see below).
3. Per sentence, in parallel: material extraction (G.1.1), tool extraction (G.1.3), the quantity MCQ
   (G.1.5; `{"question": null}` means no quantity), and operation alignment scoring (G.1.6).
4. Targets are normalised; under-specified ones (a generic word such as "solution" or "tube", the
   exclusions of G.1.1) and ones the narration never mentions (G.1.3: "Do not hallucinate") are
   dropped (whole words or their inflections, never prefixes: `words.py`); up to
   `targets_per_sentence` per kind get an MCQ (G.1.2 materials, G.1.4 tools), whose correct option
   must be the target and whose distractors must not be it, nor anything the same clip's narration
   mentions (it is used in the step too, so it may well be visible: the item would be ambiguous).
   The quantity MCQ's distractors must not be quantities spoken in the clip either.
5. The operation MCQ (G.1.7) is drafted only for units with an operation; with a VLM also only when the
   action is visible and the alignment score is at least `min_alignment` (default 3).
6. Duplicates within an experiment (the same tool, material or operation asked twice; the same
   quantity question) are dropped, first occurrence kept. Letters are assigned later, balanced per task.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from typing import Any, TypeVar

from expvid.construction.config import BuildConfig
from expvid.construction.context import BuildContext, LoadedExperiment
from expvid.construction.drafts import ClipSpec, DraftItem, StageOutput, span_key
from expvid.construction.jsontext import MalformedReply, looks_like_refusal, strip_reasoning
from expvid.construction.llm import Drafted, DraftFailure, InvalidReply, json_parser
from expvid.construction.prompts import NO_CAPTION, load_prompt
from expvid.construction.schemas import (
    FourOptionMCQ,
    MaterialList,
    OperationAlignment,
    QuantityMCQ,
    ToolList,
    norm_text,
)
from expvid.media.errors import MediaError
from expvid.media.sampler import sample_video
from expvid.media.sentences import Sentence, segment_sentences
from expvid.media.words import contains_phrase, mentioned_in
from expvid.models.spec import model_identity
from expvid.models.types import ImagePart

STAGE = "level1"
T = TypeVar("T")

#: Question wordings of the paper's Figure 11 (filled into `{question_template}` of G.1.2 / G.1.4).
MATERIAL_QUESTION = "What material appears in this process?"
TOOL_QUESTION = "What laboratory tool is being used in this research step?"

#: Words that never identify a material or a tool on their own (G.1.1 exclusions: generic containers,
#: unspecified solutions; G.1.3: generic terms).
GENERIC_TERMS = frozenset(
    {
        "solution", "solutions", "liquid", "liquids", "fluid", "fluids", "sample", "samples", "reagent",
        "reagents", "mixture", "material", "materials", "substance", "chemical", "chemicals", "stuff",
        "tube", "tubes", "container", "containers", "vessel", "tool", "tools", "equipment", "instrument",
        "device", "apparatus", "item", "object", "thing", "things", "it", "them", "water", "buffer",
    }
)  # fmt: skip
_FILLER = frozenset({"the", "a", "an", "some", "of", "this", "that", "each", "all", "new", "fresh"})
_WORD = re.compile(r"[0-9A-Za-zµα-ωΑ-Ω]+")

PROMPT_IDS = (
    "g1_1_material_extraction",
    "g1_2_material_mcq",
    "g1_3_tool_extraction",
    "g1_4_tool_mcq",
    "g1_5_quantity_mcq",
    "g1_6_operation_alignment",
    "g1_7_operation_mcq",
    "visual_caption",
)


def under_specified(target: str) -> bool:
    words = [w.casefold() for w in _WORD.findall(target)]
    meaningful = [w for w in words if w not in _FILLER]
    return len(target.strip()) < 3 or not meaningful or all(w in GENERIC_TERMS for w in meaningful)


def mentioned(target: str, narration: str) -> bool:
    """Every identifying word of the target is spoken in the narration (as the word or an inflection)."""
    return mentioned_in(target, narration)


def _contains_words(haystack: str, needle: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def target_check(target: str, kind: str, narration: str = "") -> Any:
    """G.1.2 / G.1.4 replies must keep the target as the correct option and out of the distractors,
    and no distractor may be something this clip's narration mentions (an ambiguous item)."""
    wanted = norm_text(target)

    def check(mcq: FourOptionMCQ) -> FourOptionMCQ:
        correct = norm_text(mcq.correct)
        if not (_contains_words(correct, wanted) or _contains_words(wanted, correct)):
            raise InvalidReply(
                f'the correct option {mcq.answer} ("{mcq.correct}") is not the target {kind} "{target}"'
            )
        for text in mcq.distractors:
            if _contains_words(norm_text(text), wanted):
                raise InvalidReply(f'the distractor "{text}" contains the target {kind} "{target}"')
        spoken_distractors(mcq, narration, mentioned_in)
        return mcq

    return check


def spoken_distractors(mcq: FourOptionMCQ, narration: str, spoken: Any) -> None:
    """`InvalidReply` when a distractor is mentioned in the clip's own narration."""
    if not narration:
        return
    for text in mcq.distractors:
        if spoken(text, narration):
            raise InvalidReply(
                f'the distractor "{text}" is mentioned in this clip\'s narration, so it is used in this '
                "step too and the question would have two right answers; choose distractors that this "
                "step does not use"
            )


def parse_caption(text: str | None) -> str:
    caption = strip_reasoning(text or "")
    if not caption:
        raise MalformedReply("the caption is empty")
    if looks_like_refusal(caption):
        raise MalformedReply(f"the reply is a refusal, not a description: {caption[:120]!r}")
    return " ".join(caption.split())


def fingerprint(config: BuildConfig, experiment: LoadedExperiment) -> str:
    """What a saved Level 1 is valid for (the build and `--dry-run` both ask): settings, prompts,
    source files, the drafting model and the captioning model."""
    prompts = [load_prompt(p).sha256 for p in PROMPT_IDS]
    return config.fingerprint(
        STAGE, prompts, experiment.stamp, model_identity(config.llm), model_identity(config.vlm)
    )


async def run_level1(context: BuildContext, experiment: LoadedExperiment) -> StageOutput:
    config = context.config
    output, reused = context.state.resume(experiment.video_id, STAGE, fingerprint(config, experiment))
    if reused:
        return output
    assert experiment.transcript is not None
    sentences = await asyncio.to_thread(
        segment_sentences,
        experiment.transcript,
        min_words=config.sentence_min_words,
        max_duration=config.sentence_max_seconds,
    )
    units: list[tuple[int, Sentence]] = []
    for index, sentence in enumerate(sentences):
        if sentence.duration < config.min_clip_seconds:
            output.drop("level1", f"sentence shorter than {config.min_clip_seconds:g} s")
        elif sentence.end > experiment.video_end + 1e-6:
            output.drop("level1", "sentence ends after the video")
        else:
            units.append((index, sentence))
    output.notes["sentences"] = len(sentences)
    output.notes["units"] = len(units)
    context.progress.add(STAGE, len(units))

    async def unit(index: int, sentence: Sentence) -> list[DraftItem]:
        with context.clock.running(STAGE):
            drafted = await _draft_sentence(context, experiment, index, sentence, output)
        context.progress.advance(STAGE)
        return drafted

    per_unit = await asyncio.gather(*(unit(i, s) for i, s in units))
    items = _deduplicate([item for drafted in per_unit for item in drafted], output)
    for sequence, item in enumerate(items):
        item.order = (item.clip.start, sequence)
    output.items = items
    context.state.save(output)
    return output


async def _ask(context: BuildContext, output: StageOutput, call: Awaitable[Drafted[T]]) -> Drafted[T] | None:
    try:
        async with context.calls:
            return await call
    except DraftFailure as failure:
        output.problem(f"{failure.prompt_id}: {failure.message}", transient=failure.transient, failed=True)
        return None


async def _caption(
    context: BuildContext, experiment: LoadedExperiment, sentence: Sentence, output: StageOutput
) -> tuple[str, dict[str, Any] | None]:
    if context.vlm is None:
        return NO_CAPTION, None
    assert experiment.source.video is not None
    try:
        sampled = await asyncio.to_thread(
            sample_video,
            experiment.source.video,
            num_frames=context.config.vlm_frames,
            start=sentence.start,
            end=sentence.end,
            size=None,
            max_side=448,
            cache=False,
        )
    except MediaError as error:  # a media failure costs the caption, not the unit
        output.problem(f"caption frames for {sentence.start:.2f}-{sentence.end:.2f} s: {error}")
        return NO_CAPTION, None
    images = [ImagePart(data=frame.data, mime=frame.mime) for frame in sampled.frames]
    drafted = await _ask(
        context, output, context.vlm.ask_prompt("visual_caption", {}, parse_caption, images=images)
    )
    if drafted is None:
        return NO_CAPTION, None
    return drafted.value, drafted.provenance()


def _targets(names: list[str], narration: str, task: str, limit: int, output: StageOutput) -> list[str]:
    chosen: list[str] = []
    seen: set[str] = set()
    for raw in names:
        name = " ".join(str(raw).split()).strip(" .,;:\"'")
        key = norm_text(name)
        if not name or key in seen:
            continue
        seen.add(key)
        if under_specified(name):
            output.drop(task, "under-specified target")
        elif not mentioned(name, narration):
            output.drop(task, "target not mentioned in the narration")
        elif len(chosen) >= limit:
            output.drop(task, "more targets than targets_per_sentence")
        else:
            chosen.append(name)
    return chosen


async def _draft_sentence(
    context: BuildContext, experiment: LoadedExperiment, index: int, sentence: Sentence, output: StageOutput
) -> list[DraftItem]:
    config = context.config
    llm = context.llm
    narration = sentence.text
    caption, caption_draft = await _caption(context, experiment, sentence, output)
    values = {"asr_caption": narration, "qwen_caption": caption}
    materials, tools, quantity, alignment = await asyncio.gather(
        _ask(context, output, llm.ask_prompt("g1_1_material_extraction", values, json_parser(MaterialList))),
        _ask(context, output, llm.ask_prompt("g1_3_tool_extraction", values, json_parser(ToolList))),
        _ask(
            context,
            output,
            llm.ask_prompt("g1_5_quantity_mcq", values, json_parser(QuantityMCQ, _quantity_in(narration))),
        ),
        _ask(
            context,
            output,
            llm.ask_prompt("g1_6_operation_alignment", values, json_parser(OperationAlignment)),
        ),
    )
    clip = ClipSpec(
        level=1,
        video_id=experiment.video_id,
        start=sentence.start,
        end=sentence.end,
        source_digest=experiment.video_stamp,
    )
    base = {
        "video_id": experiment.video_id,
        "category": experiment.source.discipline,
        "asr_caption": narration,
        "clip": clip,
    }
    span = span_key(sentence.start, sentence.end)
    lead = [caption_draft] if caption_draft else []
    jobs: list[Awaitable[DraftItem | None]] = []
    for task, extracted, prompt_id, question, kind in (
        ("materials", materials, "g1_2_material_mcq", MATERIAL_QUESTION, "material"),
        ("tools", tools, "g1_4_tool_mcq", TOOL_QUESTION, "tool"),
    ):
        if extracted is None:
            continue
        names = (
            extracted.value.materials if isinstance(extracted.value, MaterialList) else extracted.value.tools
        )
        for target in _targets(names, narration, task, config.targets_per_sentence, output):
            mcq_values = {"asr_caption": narration, f"target_{kind}": target, "question_template": question}
            jobs.append(
                _mcq_item(
                    context, output, task, prompt_id, mcq_values, target_check(target, kind, narration),
                    [*lead, extracted.provenance()], {**base, "draft_key": f"{task}|{span}|{norm_text(target)}"},
                    {"target": target, "sentence": index},
                )
            )  # fmt: skip
    if alignment is not None and _operation_passes(alignment.value, context, output):
        jobs.append(
            _mcq_item(
                context, output, "operation", "g1_7_operation_mcq", {"asr_caption": narration}, None,
                [*lead, alignment.provenance()], {**base, "draft_key": f"operation|{span}|"},
                {"sentence": index, "alignment": alignment.value.model_dump()},
            )
        )  # fmt: skip
    items = [item for item in await asyncio.gather(*jobs) if item is not None]
    if quantity is not None:
        mcq = quantity.value
        if mcq is None:
            output.drop("quantity", "no quantity in the narration")
        else:
            items.append(
                _item(
                    "quantity", mcq, [*lead, quantity.provenance()], {**base, "draft_key": f"quantity|{span}|"},
                    {"sentence": index},
                )
            )  # fmt: skip
    return items


def _quantity(reply: QuantityMCQ) -> FourOptionMCQ | None:
    try:
        return reply.mcq()
    except ValueError as error:
        raise InvalidReply(f"the quantity MCQ is not valid: {error}") from None


def _quantity_in(narration: str) -> Any:
    """The quantity MCQ, with no distractor that is itself a quantity spoken in the clip."""

    def check(reply: QuantityMCQ) -> FourOptionMCQ | None:
        mcq = _quantity(reply)
        if mcq is not None:
            spoken_distractors(mcq, narration, contains_phrase)
        return mcq

    return check


def _operation_passes(alignment: OperationAlignment, context: BuildContext, output: StageOutput) -> bool:
    if not alignment.has_operation:
        output.drop("operation", "no experimental operation in the clip")
        return False
    if context.vlm is None:
        return True
    if not alignment.visible_action:
        output.drop("operation", "operation not visible (G.1.6)")
        return False
    if alignment.alignment_score < context.config.min_alignment:
        output.drop("operation", f"ASR/caption alignment below {context.config.min_alignment}")
        return False
    return True


async def _mcq_item(
    context: BuildContext,
    output: StageOutput,
    task: str,
    prompt_id: str,
    values: dict[str, str],
    check: Any,
    drafts: list[dict[str, Any]],
    base: dict[str, Any],
    meta: dict[str, Any],
) -> DraftItem | None:
    drafted = await _ask(
        context, output, context.llm.ask_prompt(prompt_id, values, json_parser(FourOptionMCQ, check))
    )
    if drafted is None:
        return None
    return _item(task, drafted.value, [*drafts, drafted.provenance()], base, meta)


def _item(
    task: str, mcq: FourOptionMCQ, drafts: list[dict[str, Any]], base: dict[str, Any], meta: dict[str, Any]
) -> DraftItem:
    return DraftItem(
        task=task,
        question=mcq.question,
        correct=mcq.correct,
        distractors=mcq.distractors,
        drafts=drafts,
        meta=meta,
        **base,
    )


def _deduplicate(items: list[DraftItem], output: StageOutput) -> list[DraftItem]:
    """First occurrence wins: the same target asked twice about one experiment is one item."""
    kept: list[DraftItem] = []
    seen: set[tuple[str, ...]] = set()
    for item in sorted(items, key=lambda i: (i.clip.start, i.task)):
        assert item.correct is not None
        if item.task == "quantity":
            key: tuple[str, ...] = (item.task, norm_text(item.question), norm_text(item.correct))
        else:
            key = (item.task, norm_text(item.correct))
        if key in seen:
            output.drop(item.task, "duplicate of an earlier item of this experiment")
            continue
        seen.add(key)
        kept.append(item)
    return kept
