"""Level 2 (ExpVid 3.1 and 3.3, appendix G.2): stage segments, atomic steps and four procedural tasks.

Per experiment:
1. Stage segmentation (G.2.1) of the whole timestamped transcript, or of windows of it that fit the
   model's context when it is long (`windows.py`; segments merged in time order). Times are checked against the
   transcript (`timeline.Boundaries`: snapped within the tolerance, else the segment is rejected),
   then each segment must last 20-60 s and must not overlap an earlier one. A reply whose segments
   are ALL rejected counts as invalid and is re-asked with the reasons.
2. Atomic steps (G.2.2) per segment from its own subtitles; `null` means no operation (segment
   dropped). Step times are checked the same way; a step whose times cannot be matched keeps its
   text but has no time, and such a step cannot be cut out of a clip.
3. The full step list is the concatenation of all segment step lists (3.1); steps are numbered
   globally in that order.
4. Per segment:
   - Step ordering (>= 3 steps, G.2.3): every option of the reply is read back into a permutation of
     the segment's steps; the correct option must be the true order and the three others distinct
     wrong permutations of the SAME steps, or the reply is re-asked. Options are then written from the
     canonical step texts ("1. ...\\n2. ..."). Unless the model's set is already symmetric, the
     distractors are rebuilt into a symmetric set (`ordering.py`: every solver that compares the
     options is at chance; kept: the model's single-swap distractor).
   - Sequence generation (>= 2 steps): the full step list in the question; the answer is the
     segment's global step numbers (strings, as the release writes them).
   - Completeness verification (3-10 steps): a NON-final timed step, drawn from a hash of the seed and
     the segment's own span (`removal_draw`), is cut out of the clip; options map letters to the
     segment's local step numbers.
   - Step prediction (>= 4 steps, i.e. at least three before the last): the clip ends where the final
     step begins; the answer is the final step's global number.
   Clip edges sit in the silence between narrations (`timeline.py`), and clip names are hashes.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import random
import re
from dataclasses import dataclass
from typing import Any

from expvid.construction.config import BuildConfig
from expvid.construction.context import BuildContext, LoadedExperiment
from expvid.construction.drafts import (
    ClipSpec,
    DraftItem,
    SegmentRecord,
    SegmentStep,
    StageOutput,
    segment_id,
    span_key,
)
from expvid.construction.llm import Drafted, DraftFailure, InvalidReply, json_parser
from expvid.construction.prompts import load_prompt
from expvid.construction.schemas import OrderingMCQ, SegmentDraft, SegmentList, StepList, norm_text
from expvid.construction.timeline import Boundaries, format_time, parse_time, timestamped_lines
from expvid.construction.windows import estimate_tokens, transcript_budget, transcript_windows
from expvid.models.spec import model_identity
from expvid.ordering.rebuild import rebuild, shortcuts, symmetric
from expvid.schema import OPTION_LETTERS

STAGE = "level2"
#: Notes key of the segments G.2.2 was asked about (start, end, title, description).
SEGMENTS_ASKED = "segments_asked"
PROMPT_IDS = ("g2_1_clip_segmentation", "g2_2_step_extraction", "g2_3_sequence_ordering_mcq")

#: Question stems as the ExpVid release writes them (formats.md; appendix F.4 examples).
GENERATION_QUESTION = "Based on the full step list, determine the step numbers shown in the video."
VERIFICATION_QUESTION = "Given the complete step list, which step was *not* performed in the video?"
PREDICTION_QUESTION = (
    "Given all steps of the experiment, please predict the next operation that will take place after "
    "this video segment."
)
DEFAULT_ORDERING_QUESTION = "What is the correct sequence of steps shown in the video?"


def numbered(texts: list[str]) -> str:
    return "\n".join(f"{number}. {text}" for number, text in enumerate(texts, start=1))


@dataclass
class AcceptedSegment:
    start: float  # snapped narration start (a cue boundary)
    end: float
    title: str
    description: str
    snaps: list[str]


@dataclass
class Step:
    text: str
    start: float | None
    end: float | None


# --- 1. segmentation -----------------------------------------------------------------------------


def check_segments(
    segments: list[SegmentDraft], bounds: Boundaries, min_s: float, max_s: float
) -> tuple[list[AcceptedSegment], list[str]]:
    """Accepted segments (in time order) and a reason for every rejected one."""
    accepted: list[AcceptedSegment] = []
    rejected: list[str] = []
    for number, segment in enumerate(segments, start=1):
        where = f"segment {number} ({segment.title!r})"
        try:
            start = bounds.snap(parse_time(segment.start_time), "start_time")
            end = bounds.snap(parse_time(segment.end_time), "end_time")
        except InvalidReply as error:
            rejected.append(f"{where}: {error}")
            continue
        length = end.time - start.time
        if not min_s <= length <= max_s:
            rejected.append(
                f"{where}: lasts {length:.1f} s ({format_time(start.time)}-{format_time(end.time)}); "
                f"segments must last {min_s:g}-{max_s:g} s"
            )
            continue
        snaps = [
            f"{name} {format_time(snap.given)} snapped to {format_time(snap.time)} ({snap.moved:.2f} s)"
            for name, snap in (("start_time", start), ("end_time", end))
            if snap.moved > 1e-3
        ]
        accepted.append(AcceptedSegment(start.time, end.time, segment.title, segment.description, snaps))
    kept, overlapping = _no_overlap(sorted(accepted, key=lambda s: s.start))
    return kept, rejected + overlapping


def segmentation_parser(bounds: Boundaries, min_s: float, max_s: float) -> Any:
    def check(reply: SegmentList) -> tuple[list[AcceptedSegment], list[str]]:
        kept, rejected = check_segments(reply.segments, bounds, min_s, max_s)
        if not kept:
            raise InvalidReply("no segment is usable: " + "; ".join(rejected))
        return kept, rejected

    return json_parser(SegmentList, check)


# --- 2. steps ------------------------------------------------------------------------------------


def check_steps(
    reply: StepList, bounds: Boundaries, segment: AcceptedSegment
) -> tuple[list[Step], list[str]]:
    """Steps with times matched to the transcript inside the segment (or None), and notes on each miss."""
    steps: list[Step] = []
    notes: list[str] = []
    previous_end = segment.start
    for number, raw in enumerate(reply.atomic_steps or [], start=1):
        start = end = None
        if raw.start_time is not None and raw.end_time is not None:
            try:
                start = bounds.snap(parse_time(raw.start_time), f"step {number} start_time").time
                end = bounds.snap(parse_time(raw.end_time), f"step {number} end_time").time
                inside = segment.start - 1e-6 <= start < end <= segment.end + 1e-6
                if not inside or start < previous_end - 1e-6:
                    notes.append(f"step {number}: times {format_time(start)}-{format_time(end)} are outside the "
                                 "segment or overlap the step before; kept without times")  # fmt: skip
                    start = end = None
            except InvalidReply as error:
                notes.append(f"{error}; kept without times")
        if end is not None:
            previous_end = end
        steps.append(Step(" ".join(raw.action.split()), start, end))
    return steps, notes


# --- 4. ordering ---------------------------------------------------------------------------------


def split_numbered(text: str, count: int) -> list[str] | None:
    """The pieces of "1. a 2. b ..." (newlines or not), using the numbers 1..count in order."""
    pieces: list[str] = []
    cursor = 0
    positions: list[tuple[int, int]] = []
    for number in range(1, count + 1):
        # Not inside a number ("12.", "7.4."), but right after text is fine ("... x g.2. Vortex").
        match = re.compile(rf"(?<!\d)(?<!\d\.){number}\s*[.)]\s+").search(text, cursor)
        if match is None:
            return None
        positions.append((match.start(), match.end()))
        cursor = match.end()
    for index, (_start, body_start) in enumerate(positions):
        body_end = positions[index + 1][0] if index + 1 < len(positions) else len(text)
        pieces.append(text[body_start:body_end].strip())
    return pieces


def match_step(piece: str, texts: list[str]) -> int | None:
    """Index of the step `piece` names: exact (normalised), else a unique close match (ratio >= 0.85)."""
    wanted = norm_text(piece).rstrip(".;")
    normalised = [norm_text(t).rstrip(".;") for t in texts]
    if wanted in normalised and normalised.count(wanted) == 1:
        return normalised.index(wanted)
    ratios = [difflib.SequenceMatcher(None, wanted, t).ratio() for t in normalised]
    best = max(range(len(texts)), key=lambda i: ratios[i])
    if ratios[best] >= 0.85 and sorted(ratios)[-2:-1] != [ratios[best]]:
        return best
    return None


def read_permutation(option: str, texts: list[str], letter: str) -> tuple[int, ...]:
    pieces = split_numbered(option, len(texts))
    if pieces is None or len(pieces) != len(texts):
        raise InvalidReply(f"option {letter} is not a numbered list of the {len(texts)} steps")
    order = []
    for piece in pieces:
        index = match_step(piece, texts)
        if index is None:
            raise InvalidReply(f'option {letter} contains a step that is not in the list: "{piece[:80]}"')
        order.append(index)
    if sorted(order) != list(range(len(texts))):
        raise InvalidReply(
            f"option {letter} is not a permutation of the same steps (a step is repeated or missing)"
        )
    return tuple(order)


def ordering_parser(texts: list[str]) -> Any:
    identity = tuple(range(len(texts)))

    def check(reply: OrderingMCQ) -> tuple[str, list[tuple[int, ...]]]:
        orders = {letter: read_permutation(option, texts, letter) for letter, option in reply.options.items()}
        if orders[reply.correct_answer] != identity:
            raise InvalidReply(f"the correct option {reply.correct_answer} is not the given correct sequence")
        wrong = [order for letter, order in orders.items() if letter != reply.correct_answer]
        if identity in wrong:
            raise InvalidReply("an incorrect option repeats the correct sequence")
        if len(set(wrong)) != len(wrong):
            raise InvalidReply("two incorrect options are the same permutation")
        return reply.question.strip(), wrong

    return json_parser(OrderingMCQ, check)


# --- the stage -----------------------------------------------------------------------------------


def fingerprint(config: BuildConfig, experiment: LoadedExperiment) -> str:
    """What a saved Level 2 is valid for (the build and `--dry-run` both ask)."""
    prompts = [load_prompt(p).sha256 for p in PROMPT_IDS]
    return config.fingerprint(STAGE, prompts, experiment.stamp, model_identity(config.llm))


async def run_level2(context: BuildContext, experiment: LoadedExperiment) -> StageOutput:
    config = context.config
    output, reused = context.state.resume(experiment.video_id, STAGE, fingerprint(config, experiment))
    if reused:
        return output
    bounds = experiment.boundaries(config.timestamp_tolerance)
    transcript = experiment.transcript
    assert transcript is not None
    context.progress.add(STAGE, 1)
    with context.clock.running(STAGE):
        segmented = await _segment(context, experiment, output)
    context.progress.advance(STAGE)
    if segmented is None:
        context.state.save(output)
        return output
    accepted, rejected, segmentation_drafts = segmented
    for reason in rejected:
        output.drop("segments", "rejected segment")
        output.notes.setdefault("rejected_segments", []).append(reason)
    context.progress.add(STAGE, len(accepted))
    # What each G.2.2 request was made from: `--dry-run` rebuilds them after a transcript edit.
    output.notes[SEGMENTS_ASKED] = [
        {"start": s.start, "end": s.end, "title": s.title, "description": s.description} for s in accepted
    ]
    extracted = await asyncio.gather(*(_steps(context, bounds, s, output) for s in accepted))
    segments = [
        (s, steps, drafted)
        for s, (steps, drafted) in zip(accepted, extracted, strict=True)
        if steps and drafted is not None
    ]
    full_list = [step.text for _, steps, _ in segments for step in steps]
    output.notes["segments"] = len(segments)
    output.notes["full_steps"] = len(full_list)
    first_number = 1
    jobs = []
    for segment, steps, drafted in segments:
        numbers = list(range(first_number, first_number + len(steps)))
        first_number += len(steps)
        plan = SegmentPlan(
            experiment, bounds, segment, steps, numbers, full_list,
            segment_id(experiment.video_id, segment.start, segment.end),
            [*segmentation_drafts, drafted.provenance()], removal_draw(config.seed, experiment.video_id, segment),
            config.max_pad,
        )  # fmt: skip
        output.segments.append(plan.record())
        jobs.append(_segment_items(context, plan, output))
    items = [item for batch in await asyncio.gather(*jobs) for item in batch]
    for sequence, item in enumerate(items):
        item.order = (item.clip.start, sequence)
    output.items = items
    context.state.save(output)
    return output


async def _segment(
    context: BuildContext, experiment: LoadedExperiment, output: StageOutput
) -> tuple[list[AcceptedSegment], list[str], list[dict[str, Any]]] | None:
    """G.2.1 over the transcript, in windows when it does not fit the context; None when nothing came
    back (the failure is recorded). Segments of all windows are merged and checked for overlap."""
    config = context.config
    transcript = experiment.transcript
    assert transcript is not None
    empty_prompt = load_prompt("g2_1_clip_segmentation").fill(asr_caption="")
    budget = transcript_budget(
        config.context_tokens, config.max_tokens, estimate_tokens("".join(t or "" for t in empty_prompt))
    )
    windows = transcript_windows(transcript.cues, budget)
    if len(windows) > 1:
        output.notes["transcript_windows"] = [
            f"{format_time(w[0].start)}-{format_time(w[-1].end)} ({len(w)} cues)" for w in windows
        ]
    accepted: list[AcceptedSegment] = []
    rejected: list[str] = []
    drafts: list[dict[str, Any]] = []
    for number, window in enumerate(windows, start=1):
        bounds = Boundaries(window, tolerance=config.timestamp_tolerance)
        try:
            async with context.calls:
                segmentation = await context.llm.ask_prompt(
                    "g2_1_clip_segmentation",
                    {"asr_caption": timestamped_lines(window)},
                    segmentation_parser(bounds, config.segment_min_seconds, config.segment_max_seconds),
                )
        except DraftFailure as failure:
            where = f" (window {number} of {len(windows)})" if len(windows) > 1 else ""
            output.problem(
                f"segmentation{where}: {failure.message}", transient=failure.transient, failed=True
            )
            continue
        kept, reasons = segmentation.value
        accepted.extend(kept)
        rejected.extend(reasons)
        drafts.append(segmentation.provenance())
    if not drafts:
        return None
    merged, overlapping = _no_overlap(sorted(accepted, key=lambda s: s.start))
    return merged, rejected + overlapping, drafts


def _no_overlap(segments: list[AcceptedSegment]) -> tuple[list[AcceptedSegment], list[str]]:
    kept: list[AcceptedSegment] = []
    rejected: list[str] = []
    for candidate in segments:
        if kept and candidate.start < kept[-1].end - 1e-6:
            rejected.append(
                f"segment {candidate.title!r} ({format_time(candidate.start)}-{format_time(candidate.end)}) "
                "overlaps the segment before it"
            )
            continue
        kept.append(candidate)
    return kept, rejected


def step_values(bounds: Boundaries, start: float, end: float, title: str, description: str) -> dict[str, str]:
    """The G.2.2 prompt's values for one segment (the build's and the dry run's)."""
    cues = bounds.cues_within(start, end)
    return {
        "title": title,
        "description": description,
        "timestamped_subtitles": "\n" + timestamped_lines(cues),
    }


async def _steps(
    context: BuildContext, bounds: Boundaries, segment: AcceptedSegment, output: StageOutput
) -> tuple[list[Step], Drafted[StepList] | None]:
    values = step_values(bounds, segment.start, segment.end, segment.title, segment.description)
    try:
        async with context.calls:
            with context.clock.running(STAGE):
                drafted = await context.llm.ask_prompt("g2_2_step_extraction", values, json_parser(StepList))
    except DraftFailure as failure:
        output.problem(
            f"step extraction for {segment.title!r}: {failure.message}",
            transient=failure.transient,
            failed=True,
        )
        return [], None
    finally:
        context.progress.advance(STAGE)
    steps, notes = check_steps(drafted.value, bounds, segment)
    output.notes.setdefault("step_notes", []).extend(notes)
    if not steps:
        output.drop("segments", "no experimental operation (G.2.2 returned null)")
    return steps, drafted


def removal_draw(seed: int, video_id: str, segment: AcceptedSegment) -> float:
    """A number in [0, 1) that picks the step completeness verification removes: a function of the
    segment itself (never of how many segments came before it), so the clip keeps its name and the
    item its answer when other segments or experiments change."""
    digest = hashlib.sha256(f"{seed}|{video_id}|{span_key(segment.start, segment.end)}|removed".encode())
    return int(digest.hexdigest()[:13], 16) / float(1 << 52)


@dataclass
class SegmentPlan:
    experiment: LoadedExperiment
    bounds: Boundaries
    segment: AcceptedSegment
    steps: list[Step]
    numbers: list[int]  # global step numbers
    full_list: list[str]
    segment_id: str
    drafts: list[dict[str, Any]]
    draw: float  # seeded random number in [0, 1): which step completeness verification removes
    max_pad: float

    @property
    def clip_start(self) -> float:
        return self.bounds.pad_start(self.segment.start, max_pad=self.max_pad)

    @property
    def clip_end(self) -> float:
        return self.bounds.pad_end(self.segment.end, max_pad=self.max_pad, ceiling=self.experiment.video_end)

    def clip(self, end: float | None = None, remove: tuple[tuple[float, float], ...] = ()) -> ClipSpec:
        return ClipSpec(
            level=2,
            video_id=self.experiment.video_id,
            start=self.clip_start,
            end=self.clip_end if end is None else end,
            remove=remove,
            source_digest=self.experiment.video_stamp,
        )

    def record(self) -> SegmentRecord:
        return SegmentRecord(
            segment_id=self.segment_id,
            video_id=self.experiment.video_id,
            clip=self.clip(),
            title=self.segment.title,
            description=self.segment.description,
            steps=[
                SegmentStep(number=n, text=s.text, start=s.start, end=s.end)
                for n, s in zip(self.numbers, self.steps, strict=True)
            ],
            full_step_list=self.full_list,
        )

    def narration(self, spans: list[tuple[float, float]]) -> str:
        """Text of the cues whose middle falls inside the given spans (what the clip shows being said)."""
        texts = [c.text for a, b in spans for c in self.bounds.cues_within(a, b)]
        return " ".join(dict.fromkeys(texts))

    def base(
        self, task: str, question: str, clip: ClipSpec, spans: list[tuple[float, float]]
    ) -> dict[str, Any]:
        return {
            "task": task,
            "video_id": self.experiment.video_id,
            "category": self.experiment.source.discipline,
            "question": question,
            "asr_caption": self.narration(spans),
            "clip": clip,
            "segment_id": self.segment_id,
            "draft_key": f"{task}|{span_key(self.segment.start, self.segment.end)}",
            "drafts": list(self.drafts),
            "flags": [{"kind": "snapped_timestamps", "detail": "; ".join(self.segment.snaps)}]
            if self.segment.snaps
            else [],
        }


async def _segment_items(context: BuildContext, plan: SegmentPlan, output: StageOutput) -> list[DraftItem]:
    items: list[DraftItem] = []
    texts = [s.text for s in plan.steps]
    full = numbered(plan.full_list)
    whole = [(plan.clip_start, plan.clip_end)]
    n = len(plan.steps)
    if n >= 3:
        item = await _ordering(context, plan, texts, output)
        if item is not None:
            items.append(item)
    else:
        output.drop("sequence_ordering", "segment has fewer than 3 steps")
    if n >= 2:
        items.append(
            DraftItem(
                answer=[str(number) for number in plan.numbers],
                meta={"steps": n},
                **plan.base(
                    "sequence_generation",
                    f"{GENERATION_QUESTION}\nFull Step List:\n{full}",
                    plan.clip(),
                    whole,
                ),
            )
        )
    else:
        output.drop("sequence_generation", "segment has fewer than 2 steps")
    verification = _verification(plan, output)
    if verification is not None:
        items.append(verification)
    prediction = _prediction(plan, full, output)
    if prediction is not None:
        items.append(prediction)
    return items


async def _ordering(
    context: BuildContext, plan: SegmentPlan, texts: list[str], output: StageOutput
) -> DraftItem | None:
    values = {
        "title": plan.segment.title,
        "description": plan.segment.description,
        "steps_text": numbered(texts),
    }
    try:
        async with context.calls:
            drafted = await context.llm.ask_prompt(
                "g2_3_sequence_ordering_mcq", values, ordering_parser(texts)
            )
    except DraftFailure as failure:
        output.problem(
            f"ordering MCQ for {plan.segment_id}: {failure.message}", transient=failure.transient, failed=True
        )
        return None
    question, wrong = drafted.value
    identity = tuple(range(len(texts)))
    meta: dict[str, Any] = {}
    found = shortcuts(identity, wrong)
    if context.config.repair_ordering and (found or not symmetric(identity, wrong)):
        rebuilt = rebuild(identity, wrong, random.Random(f"{context.config.seed}:{plan.segment_id}:ordering"))
        if rebuilt is not None:
            why = "; ".join(found) or "the option set is not symmetric (some distance tells options apart)"
            meta = {"llm_permutations": [list(o) for o in wrong], "distractors_rebuilt": why}
            wrong = rebuilt
    base = plan.base(
        "sequence_ordering",
        question or DEFAULT_ORDERING_QUESTION,
        plan.clip(),
        [(plan.clip_start, plan.clip_end)],
    )
    base["drafts"] = [*base["drafts"], drafted.provenance()]
    return DraftItem(
        correct=numbered(texts),
        distractors=[numbered([texts[i] for i in order]) for order in wrong],
        meta={"permutations": [list(order) for order in wrong], **meta},
        **base,
    )


def _step_span(plan: SegmentPlan, local: int) -> tuple[float, float] | None:
    step = plan.steps[local]
    if step.start is None or step.end is None:
        return None
    start = plan.bounds.pad_start(step.start, max_pad=plan.max_pad, floor=plan.clip_start)
    end = plan.bounds.pad_end(step.end, max_pad=plan.max_pad, ceiling=plan.clip_end)
    return start, end


def _verification(plan: SegmentPlan, output: StageOutput) -> DraftItem | None:
    n = len(plan.steps)
    if not 3 <= n <= len(OPTION_LETTERS):
        output.drop("video_verification", f"segment has {n} steps (3 to {len(OPTION_LETTERS)} needed)")
        return None
    candidates = [i for i in range(n - 1) if _step_span(plan, i) is not None]
    if not candidates:
        output.drop("video_verification", "no non-final step has times in the transcript")
        return None
    local = candidates[int(plan.draw * len(candidates))]
    span = _step_span(plan, local)
    assert span is not None
    if span[0] <= plan.clip_start + 1e-6 and span[1] >= plan.clip_end - 1e-6:
        output.drop("video_verification", "the removed step would leave an empty clip")
        return None
    kept = [(plan.clip_start, span[0]), (span[1], plan.clip_end)]
    question = f"{VERIFICATION_QUESTION}\nStep List:\n{numbered([s.text for s in plan.steps])}"
    return DraftItem(
        options={OPTION_LETTERS[i]: str(i + 1) for i in range(n)},
        answer=OPTION_LETTERS[local],
        meta={"removed_step": plan.numbers[local], "removed_local": local + 1},
        **plan.base(
            "video_verification", question, plan.clip(remove=(span,)), [s for s in kept if s[1] > s[0]]
        ),
    )


def _prediction(plan: SegmentPlan, full: str, output: StageOutput) -> DraftItem | None:
    n = len(plan.steps)
    if n < 4:
        output.drop("step_prediction", "segment has fewer than 3 steps before its last")
        return None
    span = _step_span(plan, n - 1)
    if span is None:
        output.drop("step_prediction", "the final step has no times in the transcript")
        return None
    if span[0] <= plan.clip_start + 1.0:
        output.drop("step_prediction", "less than 1 s of video before the final step")
        return None
    question = f"{PREDICTION_QUESTION}\nFull Step List:\n{full}"
    return DraftItem(
        answer=plan.numbers[-1],
        meta={"removed_step": plan.numbers[-1]},
        **plan.base("step_prediction", question, plan.clip(end=span[0]), [(plan.clip_start, span[0])]),
    )
