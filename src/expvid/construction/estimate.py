"""`expvid build --dry-run`: what a build will ask and cost, stage by stage, before any model call.

Nothing is sent to a model and nothing is written. The sources are read and probed (transcripts
parsed, videos probed, meta.json durations for videos not on disk), the duration rule and the review
file are applied, and every stage the build will not reuse is planned. A saved stage is reused only
when its fingerprint is today's (the same function as the build's: settings, prompts, the content
of the transcript, paper and video, the model, the `--redo` epoch), so an edited transcript, a
changed setting or a `--redo` is seen. A stage that will be redone pays only for the requests its
response cache has not answered (`estimate_cache.py`): every request that can be built before any
reply is built exactly as the build will send it and looked up.

- transcription (with `-R stt=...`): the minutes of audio of every video without a transcript whose
  narration is not in the transcript cache yet, priced per minute (`speech/sources.plan_transcripts`;
  found in the cache without decoding, free). A transcript found in the cache is used for the rest of
  the plan; one still to make is stood in for by 150 words a minute over the whole video.
- curation: one call per experiment whose transcript is not scored with today's inputs and whose
  scoring request is not answered in the cache; a cached reply gives its real scores to the decision.
- Level 1: the real sentence units (the same sentence splitter as the build). A unit whose four
  extraction requests are all answered costs nothing (its MCQs are the same requests, answered too).
  Any other unit counts its unanswered extractions and its MCQs: as many as an earlier run drafted
  from the same sentence, else up to `2 x targets_per_sentence` target MCQs and one operation MCQ
  (plus one caption with `--vlm`, where units are always counted: captions need the frames).
- Level 2: one G.2.1 call per transcript window (`windows.py`) not answered in the cache, and per
  segment of such a window one G.2.2 and one G.2.3 call: the segments an earlier run found there
  whose G.2.2 request, rebuilt from today's transcript, is not answered; without an earlier run one
  segment per 48 s narrated (the paper's average segment length, 3.1).
- Level 3: the findings summary and the blank drafts when a paper is there (real paper sections),
  unless the summary's request is answered in the cache.
- blind audit: for stages the build reuses, their real items: each blind request is built exactly as
  the build builds it (item ids and letters depend on the item alone) and looked up in the response
  cache, and only the requests not answered yet are counted (a finished build forecasts 0); for
  units still to draft, the items an earlier run drafted from them, else the most they can produce,
  x `blind_samples`.

Which experiments curation keeps is only known once their transcripts are scored: when every
transcript is scored (saved or cached), the real decision is used; otherwise every experiment
that passes the rules known without a model (readable files, duration, review, top K per discipline)
is counted, an upper bound. Calls that depend on a reply not sent yet are counted as the earlier run
made them, or at most; re-asks are not counted (each invalid reply adds a call). Output tokens are
the mean measured per prompt in earlier runs of this directory (`.build/usage.json`) when there are
any, else a typical reply size per prompt (no reasoning tokens: give a reasoning model's runs a
pilot first). Tokens are estimated at 3 characters per token.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from expvid.construction import curation, level1, level2, level3
from expvid.construction.accounting import Price
from expvid.construction.config import BuildConfig
from expvid.construction.context import LoadedExperiment
from expvid.construction.curation import STAGE as CURATION_STAGE
from expvid.construction.curation import decide
from expvid.construction.digests import DigestCache
from expvid.construction.drafts import DraftItem, StageOutput, segment_id, span_key
from expvid.construction.estimate_cache import CacheProbe
from expvid.construction.jsontext import MalformedReply
from expvid.construction.llm import InvalidReply, json_parser, prompt_messages
from expvid.construction.papers import PaperError, read_paper
from expvid.construction.prompts import NO_CAPTION, load_prompt, text_file
from expvid.construction.retries import RetryBook
from expvid.construction.review import CSV_NAME, read_reviews
from expvid.construction.schemas import TranscriptScores
from expvid.construction.speech.sources import TranscriptionPlan
from expvid.construction.state import STATE_DIR, BuildState
from expvid.construction.timeline import timestamped_lines
from expvid.construction.windows import estimate_tokens, transcript_budget, transcript_windows
from expvid.media.sentences import segment_sentences
from expvid.media.transcript_model import Cue, Transcript
from expvid.models.types import GenerateResponse

USAGE_FILE = "usage.json"
#: Typical reply tokens per prompt of a non-reasoning model (JSON of the asked shape).
TYPICAL_OUTPUT = {
    "transcript_quality": 80,
    "visual_caption": 80,
    "g1_1_material_extraction": 30,
    "g1_3_tool_extraction": 30,
    "g1_5_quantity_mcq": 120,
    "g1_6_operation_alignment": 30,
    "g1_2_material_mcq": 120,
    "g1_4_tool_mcq": 120,
    "g1_7_operation_mcq": 130,
    "g2_1_clip_segmentation": 400,
    "g2_2_step_extraction": 250,
    "g2_3_sequence_ordering_mcq": 400,
    "findings_summary": 400,
    "level3_blanks": 600,
    "blind_audit": 40,  # the F.4 evaluation prompt, asked without the video
}
#: Level 1's extraction prompts: asked per sentence before any reply (the MCQs depend on their replies).
FIRST_PHASE = (
    "g1_1_material_extraction",
    "g1_3_tool_extraction",
    "g1_5_quantity_mcq",
    "g1_6_operation_alignment",
)
#: Level 1's MCQ prompts per item task (asked from the extractions' replies).
LEVEL1_MCQ = {"materials": "g1_2_material_mcq", "tools": "g1_4_tool_mcq", "operation": "g1_7_operation_mcq"}
SEGMENT_SECONDS = 48.0
BLIND_INPUT = 300  # F.4 instruction + a Level-1 question and options, in tokens
#: A narration not transcribed yet: a typical speaking rate, in sentences of the paper's Level-1 length.
WORDS_PER_MINUTE = 150
SENTENCE_SECONDS = 8.0


def placeholder_transcript(duration: float) -> Transcript:
    """A stand-in for a narration speech-to-text has not made yet, for planning only: sentences of
    `SENTENCE_SECONDS` at `WORDS_PER_MINUTE` over the whole video (an upper bound on narrated time)."""
    cues = []
    start = 0.0
    while start + 1.0 <= duration:
        end = min(duration, start + SENTENCE_SECONDS)
        words = max(3, round((end - start) * WORDS_PER_MINUTE / 60))
        cues.append(Cue(start, end, " ".join(["narration"] * words) + "."))
        start = end
    return Transcript(tuple(cues))


@dataclass
class StagePlan:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    role: str = "llm"
    basis: set[str] = field(default_factory=set)

    def add(self, prompt_id: str, prompt_text: str | int, outputs: dict[str, float], n: int = 1) -> None:
        tokens = prompt_text if isinstance(prompt_text, int) else estimate_tokens(prompt_text)
        self.calls += n
        self.prompt_tokens += n * tokens
        measured = outputs.get(prompt_id)
        self.completion_tokens += n * int(
            measured if measured is not None else TYPICAL_OUTPUT.get(prompt_id, 100)
        )
        self.basis.add("measured" if measured is not None else "typical")


def record_usage(state_root: Path, by_stage: dict[str, dict[str, Any]]) -> None:
    """Add this run's replies (sent and cached) per prompt to `.build/usage.json` for later estimates."""
    path = state_root / USAGE_FILE
    try:
        usage: dict[str, dict[str, int]] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        usage = {}
    for key, counts in by_stage.items():
        prompt_id = key.split(":", 1)[1]
        entry = usage.setdefault(prompt_id, {"replies": 0, "completion_tokens": 0})
        replies = counts["requests"] + counts["cache_hits"]
        if replies:
            entry["replies"] += replies
            entry["completion_tokens"] += counts["completion_tokens"] + counts["cached_completion_tokens"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(usage, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _measured_outputs(out: Path) -> dict[str, float]:
    try:
        usage = json.loads((out / STATE_DIR / USAGE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v["completion_tokens"] / v["replies"] for k, v in usage.items() if v.get("replies")}


def _fill(prompt_id: str, **values: str) -> str:
    prompt = load_prompt(prompt_id)
    wanted = {name: values.get(name, "x") for name in prompt.placeholders}
    system, user = prompt.fill(**wanted)
    return (system or "") + "\n" + user


@dataclass
class _Planner:
    """What one dry run reads: the settings, the saved stages (as the build will judge them), the
    response cache, the measured reply sizes, and what it has planned so far."""

    config: BuildConfig
    state: BuildState
    probe: CacheProbe
    digests: DigestCache
    outputs: dict[str, float]
    plans: dict[str, StagePlan]
    items: dict[str, int] = field(default_factory=lambda: {"level1": 0, "level2": 0, "level3": 0})
    drafted: list[DraftItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Per stage, the experiments a saved output exists for but does not fit any more (redone).
    stale: dict[str, list[str]] = field(default_factory=dict)

    def finished(self, experiment: LoadedExperiment, stage: str, fingerprint: str) -> StageOutput | None:
        """The saved output the build will reuse: complete and made with today's fingerprint."""
        saved = self.state.load(experiment.video_id, stage, fingerprint)
        if saved is not None and saved.complete:
            return saved
        if self.state.has(experiment.video_id, stage):
            self.stale.setdefault(stage, []).append(experiment.video_id)
        return None


async def estimate_build(
    config: BuildConfig,
    experiments: list[LoadedExperiment],
    speech: TranscriptionPlan | None = None,
    retries: RetryBook | None = None,
) -> dict[str, Any]:
    """The plan and its estimated cost (see the module docstring); no model is asked."""
    out = config.out.expanduser()
    retries = retries or RetryBook(out / STATE_DIR, read_only=True)
    state = BuildState(out, create=False)
    state.epochs = retries.epochs
    plans: dict[str, StagePlan] = {
        name: StagePlan(role=role)
        for name, role in (
            ("curation", "llm"), ("level1", "llm"), ("captions", "vlm"), ("level2", "llm"),
            ("level3", "llm"), ("blind_audit", "blind"),
        )
    }  # fmt: skip
    planner = _Planner(
        config, state, CacheProbe(config, retries), DigestCache(state.root if state.root.is_dir() else None),
        _measured_outputs(out), plans,
    )  # fmt: skip
    try:
        return await _estimate(planner, experiments, speech)
    finally:
        await planner.probe.aclose()


async def _estimate(
    planner: _Planner, experiments: list[LoadedExperiment], speech: TranscriptionPlan | None
) -> dict[str, Any]:
    config, plans, notes = planner.config, planner.plans, planner.notes
    usable = [e for e in experiments if not e.problems]
    scored: dict[str, StageOutput] = {}
    unscored = 0
    for experiment in usable:
        await asyncio.to_thread(experiment.load_digests, planner.digests, video=False)
        saved = planner.finished(experiment, CURATION_STAGE, curation.fingerprint(config, experiment))
        if saved is not None and "scores" in saved.notes:
            scored[experiment.video_id] = saved
            continue
        values = curation.prompt_values(experiment)
        reply = await planner.probe.cached(
            "llm", prompt_messages(curation.PROMPT_ID, values), prompt_id=curation.PROMPT_ID,
            experiment=experiment.video_id,
        )  # fmt: skip
        scores = _scores(reply)
        if scores is not None:  # the build reads this reply from the cache: free, and its decision is known
            scored[experiment.video_id] = StageOutput(
                video_id=experiment.video_id, stage=CURATION_STAGE, notes={"scores": scores, "draft": {}}
            )
            continue
        unscored += 1
        plans["curation"].add(curation.PROMPT_ID, _fill(curation.PROMPT_ID, **values), planner.outputs)
    reviews = read_reviews(config.out.expanduser() / CSV_NAME)
    if not unscored:
        report = decide(config.curation, experiments, scored, reviews)
        kept_ids = set(report.kept) | set(report.videos_needed)
        notes.append(f"curation: the saved or cached scores keep {len(kept_ids)} experiment(s)")
    else:
        assumed = {
            e.video_id: StageOutput(
                video_id=e.video_id,
                stage=CURATION_STAGE,
                notes={
                    "scores": dict.fromkeys(
                        ("continuity", "alignment", "clarity", "integrity", "focus"), 5.0
                    ),
                    "draft": {},
                },
            )
            for e in usable
        }
        report = decide(config.curation, experiments, {**assumed, **scored}, reviews)
        kept_ids = set(report.kept) | set(report.videos_needed)
        notes.append(
            f"curation: {unscored} transcript(s) not scored yet; counted as if all passed the "
            f"score rule: at most {len(kept_ids)} experiment(s) kept ({report.duration_rule})"
        )
    kept = [e for e in experiments if e.video_id in kept_ids]
    for experiment in kept:
        await _plan_experiment(planner, experiment)
    items = planner.items
    blind_items = items["level1"] + items["level2"] + items["level3"]
    if config.blind_samples:
        plans["blind_audit"].add(
            "blind_audit", BLIND_INPUT, planner.outputs, n=blind_items * config.blind_samples
        )
        if planner.drafted:
            to_ask, answered = await _blind_requests(planner)
            for prompt in to_ask:
                plans["blind_audit"].add("blind_audit", prompt, planner.outputs)
            notes.append(
                f"blind audit of the {len(planner.drafted)} item(s) already drafted: {answered} request(s) "
                f"answered in the cache (free), {len(to_ask)} to send"
            )
            blind_items += len(planner.drafted)
    for stage, video_ids in sorted(planner.stale.items()):
        notes.append(
            f"{stage}: saved for {', '.join(sorted(set(video_ids)))} but made from other inputs or settings (an "
            "edited transcript, a changed setting): planned again, less what the response cache answers"
        )
    notes += planner.probe.notes
    if not config.vlm:
        del plans["captions"]
    return _priced(config, plans, notes, len(experiments), len(kept), blind_items, speech)


def _scores(reply: GenerateResponse | None) -> dict[str, float] | None:
    """The five scores of a cached transcript-quality reply, as the build parses it (None: unusable)."""
    if reply is None:
        return None
    try:
        return json_parser(TranscriptScores)(reply.text).criteria()
    except (MalformedReply, InvalidReply, ValidationError):
        return None


async def _plan_experiment(planner: _Planner, experiment: LoadedExperiment) -> None:
    """Add one experiment's calls: a stage the build will reuse adds its items (for the blind audit),
    a stage it will redo adds the requests the response cache has not answered (see the module doc)."""
    config, state, video_id = planner.config, planner.state, experiment.video_id
    levels = config.levels
    if any(state.has(video_id, stage) for stage in ("level1", "level2", "level3")):
        await asyncio.to_thread(experiment.load_digests, planner.digests)  # the fingerprints name the video

    def reused(stage: str, fingerprint: Callable[[], str]) -> bool:
        """Count the stage's saved drafts when they are still current; False: it must be planned."""
        saved = planner.finished(experiment, stage, fingerprint()) if state.has(video_id, stage) else None
        if saved is not None:
            planner.drafted.extend(saved.items)
        return saved is not None

    if 1 in levels and not reused("level1", lambda: level1.fingerprint(config, experiment)):
        await _plan_level1(planner, experiment, state.saved_output(video_id, "level1"))
    if 2 in levels and not reused("level2", lambda: level2.fingerprint(config, experiment)):
        await _plan_level2(planner, experiment, state.saved_output(video_id, "level2"))
    if 3 in levels and experiment.source.paper is not None:

        def level3_key() -> str:
            # Level 3 depends on Level 2 through the fingerprint Level 2 is saved with.
            key2 = (
                state.stamp("level2", level2.fingerprint(config, experiment), video_id)
                if 2 in levels
                else None
            )
            return level3.fingerprint(config, experiment, key2)

        if not reused("level3", level3_key):
            await _plan_level3(planner, experiment)


def _items_of_span(stale: StageOutput | None, start: float, end: float) -> list[DraftItem] | None:
    """The items an earlier run drafted from the sentence [start, end) (None: no earlier run)."""
    if stale is None:
        return None
    span = span_key(start, end)
    return [item for item in stale.items if span_key(item.clip.start, item.clip.end) == span]


async def _plan_level1(planner: _Planner, experiment: LoadedExperiment, stale: StageOutput | None) -> None:
    """Level 1 per sentence unit. A unit whose four extraction requests are all answered in the cache
    is drafted again from it (its MCQ requests are the same ones, answered too). Any other unit counts
    its unanswered extractions, and MCQs: as many as an earlier run drafted from the same sentence
    (`stale`: an edited word rarely changes what is extracted), else up to `2 x targets_per_sentence +
    1`; its items go to the blind audit the same way."""
    config, plans, outputs = planner.config, planner.plans, planner.outputs
    transcript = experiment.transcript
    assert transcript is not None
    sentences = segment_sentences(
        transcript, min_words=config.sentence_min_words, max_duration=config.sentence_max_seconds
    )
    units = [s for s in sentences if s.duration >= config.min_clip_seconds]
    for sentence in units:
        values = {"asr_caption": sentence.text, "qwen_caption": NO_CAPTION}
        missing = [
            prompt_id
            for prompt_id in FIRST_PHASE
            if config.vlm or not await planner.probe.answered("llm", prompt_id, values, experiment.video_id)
        ]
        if not missing:
            continue
        before = _items_of_span(stale, sentence.start, sentence.end)
        if config.vlm:
            plans["captions"].add("visual_caption", 85 * config.vlm_frames + 200, outputs)
            values["qwen_caption"] = "(a caption)"
        for prompt_id in missing:
            plans["level1"].add(prompt_id, _fill(prompt_id, **values), outputs)
        if before is None:
            planner.items["level1"] += 2 * config.targets_per_sentence + 2
            plans["level1"].add("g1_7_operation_mcq", _fill("g1_7_operation_mcq", **values), outputs)
            for prompt_id in ("g1_2_material_mcq", "g1_4_tool_mcq"):
                plans["level1"].add(
                    prompt_id, _fill(prompt_id, **values), outputs, n=config.targets_per_sentence
                )
            continue
        planner.items["level1"] += len(before)
        for item in before:
            if item.task in LEVEL1_MCQ:
                prompt_id = LEVEL1_MCQ[item.task]
                plans["level1"].add(prompt_id, _fill(prompt_id, **values), outputs)


async def _plan_level2(planner: _Planner, experiment: LoadedExperiment, stale: StageOutput | None) -> None:
    """Level 2 per transcript window. A window whose G.2.1 request is answered in the cache is
    segmented again from it (its G.2.2 / G.2.3 requests are the same ones). Any other window counts
    its G.2.1 call and, per segment, one G.2.2 and one G.2.3 call: for the segments an earlier run
    found in the window (`stale`), those whose G.2.2 request (rebuilt from today's transcript) the
    cache has not answered, with the items they gave; without an earlier run, one segment per 48 s
    narrated, four items each."""
    config, plans, outputs = planner.config, planner.plans, planner.outputs
    transcript = experiment.transcript
    assert transcript is not None
    empty = load_prompt("g2_1_clip_segmentation").fill(asr_caption="")
    budget = transcript_budget(
        config.context_tokens, config.max_tokens, estimate_tokens("".join(t or "" for t in empty))
    )
    asked = None if stale is None else stale.notes.get(level2.SEGMENTS_ASKED)
    bounds = experiment.boundaries(config.timestamp_tolerance)
    for window in transcript_windows(transcript.cues, budget):
        values = {"asr_caption": timestamped_lines(window)}
        if await planner.probe.answered("llm", "g2_1_clip_segmentation", values, experiment.video_id):
            continue
        plans["level2"].add("g2_1_clip_segmentation", _fill("g2_1_clip_segmentation", **values), outputs)
        if isinstance(asked, list):
            assert stale is not None
            for segment in asked:
                if not window[0].start - 1e-6 <= segment["start"] < window[-1].end:
                    continue
                step = level2.step_values(
                    bounds, segment["start"], segment["end"], segment["title"], segment["description"]
                )
                if await planner.probe.answered("llm", "g2_2_step_extraction", step, experiment.video_id):
                    continue
                plans["level2"].add("g2_2_step_extraction", _fill("g2_2_step_extraction", **step), outputs)
                plans["level2"].add(
                    "g2_3_sequence_ordering_mcq",
                    _fill("g2_3_sequence_ordering_mcq", steps_text=step["timestamped_subtitles"]),
                    outputs,
                )
                named = segment_id(experiment.video_id, segment["start"], segment["end"])
                planner.items["level2"] += sum(1 for item in stale.items if item.segment_id == named)
            continue
        narrated = sum(c.end - c.start for c in window)
        segments = max(1, math.ceil(narrated / SEGMENT_SECONDS))
        per_segment = max(1, len(window) // segments)
        sample = timestamped_lines(window[:per_segment])
        plans["level2"].add(
            "g2_2_step_extraction",
            _fill("g2_2_step_extraction", timestamped_subtitles=sample),
            outputs,
            segments,
        )
        plans["level2"].add(
            "g2_3_sequence_ordering_mcq",
            _fill("g2_3_sequence_ordering_mcq", steps_text=sample),
            outputs,
            segments,
        )
        planner.items["level2"] += 4 * segments


async def _plan_level3(planner: _Planner, experiment: LoadedExperiment) -> None:
    """Level 3: the findings summary and the blank drafts, unless the summary's request is answered
    in the cache (then the drafts' request, made from its reply, is too)."""
    config, plans, outputs = planner.config, planner.plans, planner.outputs
    source = experiment.source
    assert source.paper is not None
    try:
        sections = read_paper(source.paper, title=source.title).markdown()
    except PaperError:
        return
    values = {"title": source.title, "discipline": source.discipline, "paper_sections": sections}
    if await planner.probe.answered("llm", "findings_summary", values, experiment.video_id):
        return
    plans["level3"].add("findings_summary", _fill("findings_summary", **values), outputs)
    plans["level3"].add(
        "level3_blanks",
        _fill("level3_blanks", paper_sections=sections, guidelines=text_file("g3_level3_guidelines.txt")),
        outputs,
    )
    planner.items["level3"] += 2 * config.level3_questions


async def _blind_requests(planner: _Planner) -> tuple[list[str], int]:
    """The blind-audit prompts of already drafted items that the cache has not answered yet, and the
    number it has answered."""
    from expvid.construction.audits import BLIND_PROMPT_ID, BLIND_STAGE, blind_messages
    from expvid.construction.writer import finalize_item
    from expvid.models.types import TextPart

    config = planner.config
    finals: dict[str, Any] = {}
    for draft in planner.drafted:
        final = finalize_item(draft, config.seed)
        finals.setdefault(final.key, final)
    to_ask: list[str] = []
    answered = 0
    for final in finals.values():
        messages = blind_messages(final.item)
        for seed in range(config.blind_samples):
            reply = await planner.probe.cached(
                "blind", messages, prompt_id=BLIND_PROMPT_ID, stage=BLIND_STAGE, experiment=final.draft.video_id,
                temperature=config.blind_temperature, seed=seed,
            )  # fmt: skip
            if reply is not None:
                answered += 1
            else:
                to_ask.append("".join(p.text for m in messages for p in m.content if isinstance(p, TextPart)))
    return to_ask, answered


def _priced(
    config: BuildConfig,
    plans: dict[str, StagePlan],
    notes: list[str],
    n_experiments: int,
    n_kept: int,
    blind_items: int,
    speech: TranscriptionPlan | None = None,
) -> dict[str, Any]:
    prices: dict[str, Price] = config.effective_prices()
    stages: dict[str, dict[str, Any]] = {}
    total_cost: float | None = 0.0
    calls = sum(p.calls for p in plans.values())
    if speech is not None and speech.settings is not None:
        # One upload per video (a remote engine splits audio over its size limit into more).
        total_cost = speech.cost()
        calls += len(speech.pending)
        stages["transcription"] = {
            "role": "stt",
            "calls": len(speech.pending),
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost": total_cost,
            "output_basis": f"{speech.minutes:.2f} min of audio ({speech.cached_minutes:.2f} cached)",
            "minutes": round(speech.minutes, 3),
            "cached_minutes": round(speech.cached_minutes, 3),
        }
        note = speech.note()
        if note:
            notes.insert(0, note)
    for name, plan in plans.items():
        price = prices.get(plan.role)
        cost = None if price is None else round(price.cost(plan.prompt_tokens, plan.completion_tokens), 4)
        if plan.calls and cost is None:
            total_cost = None
        elif total_cost is not None and cost is not None:
            total_cost += cost
        stages[name] = {
            "role": plan.role,
            "calls": plan.calls,
            "prompt_tokens": plan.prompt_tokens,
            "completion_tokens": plan.completion_tokens,
            "cost": cost if plan.calls else 0.0,
            "output_basis": "+".join(sorted(plan.basis)) or "-",
        }
    unpriced = sorted({p.role for p in plans.values() if p.calls and p.role not in prices})
    if unpriced:
        notes.append(f"no price for {', '.join(unpriced)}: give --price ROLE=IN,OUT")
    notes.append(
        f"blind audit: at most {blind_items} item(s) x {config.blind_samples} sample(s), less what is cached"
    )
    return {
        "experiments": n_experiments,
        "kept": n_kept,
        "stages": stages,
        "total": {
            "calls": calls,
            "prompt_tokens": sum(p.prompt_tokens for p in plans.values()),
            "completion_tokens": sum(p.completion_tokens for p in plans.values()),
            "cost": None if total_cost is None else round(total_cost, 4),
        },
        "currency": "USD",
        "notes": notes,
    }


def estimate_markdown(estimate: dict[str, Any]) -> str:
    lines = [
        f"Dry run: {estimate['experiments']} experiment(s), at most {estimate['kept']} kept. No model was asked.",
        "",
        "| stage | role | calls | tokens in | tokens out | est. USD | output tokens |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, stage in {
        **estimate["stages"],
        "total": {**estimate["total"], "role": "", "output_basis": ""},
    }.items():
        cost = "unknown" if stage["cost"] is None else f"{stage['cost']:.4f}"
        lines.append(
            f"| {name} | {stage['role']} | {stage['calls']} | {stage['prompt_tokens']} | "
            f"{stage['completion_tokens']} | {cost} | {stage['output_basis']} |"
        )
    lines += [""] + [f"- {note}" for note in estimate["notes"]]
    return "\n".join(lines) + "\n"
