"""`expvid build --dry-run`: what a build will ask and cost, stage by stage, before any model call.

Nothing is sent to a model and nothing is written. The sources are read and probed (transcripts
parsed, videos probed, meta.json durations for videos not on disk), the duration rule and the review
file are applied, and every stage that is not already finished in the candidate directory is planned:

- transcription (with `-R stt=...`): the minutes of audio of every video without a transcript whose
  narration is not in the transcript cache yet, priced per minute (`speech/sources.plan_transcripts`;
  found in the cache without decoding, free). A transcript found in the cache is used for the rest of
  the plan; one still to make is stood in for by 150 words a minute over the whole video.
- curation: one call per experiment whose transcript is not scored yet; the input is the real
  prompt filled with the real transcript.
- Level 1: the real sentence units (the same sentence splitter as the build); per unit the four
  extraction calls, up to `2 x targets_per_sentence` target MCQs and one operation MCQ (plus one
  caption with `--vlm`); inputs are the real prompts filled with the real sentence.
- Level 2: one G.2.1 call per transcript window (`windows.py`), and per stage segment one G.2.2 and
  one G.2.3 call; the number of segments is not known before G.2.1 answers, so it is estimated from
  the narrated time at one segment per 48 s (the paper's average segment length, 3.1).
- Level 3: the findings summary and the blank drafts when a paper is there (real paper sections).
- blind audit: for stages already finished, their real items: each blind request is built exactly as
  the build builds it (item ids and letters depend on the item alone) and looked up in the response
  cache, and only the requests not answered yet are counted (a finished build forecasts 0); for
  stages still to draft, the items they can produce at most, x `blind_samples`.

Which experiments curation keeps is only known once their transcripts are scored: when every
transcript is already scored (an earlier run), the real decision is used; otherwise every experiment
that passes the rules known without a model (readable files, duration, review, top K per discipline)
is counted, an upper bound. Call counts are upper bounds without re-asks (each invalid reply adds a
call). Output tokens are the mean measured per prompt in earlier runs of this directory
(`.build/usage.json`) when there are any, else a typical reply size per prompt (no reasoning tokens:
give a reasoning model's runs a pilot first). Tokens are estimated at 3 characters per token.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.construction.accounting import Price
from expvid.construction.config import BuildConfig
from expvid.construction.context import LoadedExperiment
from expvid.construction.curation import STAGE as CURATION_STAGE
from expvid.construction.curation import decide
from expvid.construction.drafts import DraftItem, StageOutput
from expvid.construction.papers import PaperError, read_paper
from expvid.construction.prompts import load_prompt, text_file
from expvid.construction.review import CSV_NAME, read_reviews
from expvid.construction.speech.sources import TranscriptionPlan
from expvid.construction.state import STATE_DIR
from expvid.construction.timeline import format_time, timestamped_lines
from expvid.construction.windows import estimate_tokens, transcript_budget, transcript_windows
from expvid.media.sentences import segment_sentences
from expvid.media.transcript_model import Cue, Transcript

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


def _saved(out: Path, video_id: str, stage: str) -> StageOutput | None:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in video_id)
    try:
        return StageOutput.model_validate_json(
            (out / STATE_DIR / "stages" / safe / f"{stage}.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return None


def _fill(prompt_id: str, **values: str) -> str:
    prompt = load_prompt(prompt_id)
    wanted = {name: values.get(name, "x") for name in prompt.placeholders}
    system, user = prompt.fill(**wanted)
    return (system or "") + "\n" + user


async def estimate_build(
    config: BuildConfig, experiments: list[LoadedExperiment], speech: TranscriptionPlan | None = None
) -> dict[str, Any]:
    """The plan and its estimated cost (see the module docstring); no model is asked."""
    out = config.out.expanduser()
    outputs = _measured_outputs(out)
    plans: dict[str, StagePlan] = {
        name: StagePlan(role=role)
        for name, role in (
            ("curation", "llm"), ("level1", "llm"), ("captions", "vlm"), ("level2", "llm"),
            ("level3", "llm"), ("blind_audit", "blind"),
        )
    }  # fmt: skip
    notes: list[str] = []
    usable = [e for e in experiments if not e.problems]
    scored: dict[str, StageOutput] = {}
    for experiment in usable:
        saved = _saved(out, experiment.video_id, CURATION_STAGE)
        if saved is not None and saved.complete and "scores" in saved.notes:
            scored[experiment.video_id] = saved
            continue
        transcript = experiment.transcript
        assert transcript is not None and experiment.duration is not None
        plans["curation"].add(
            "transcript_quality",
            _fill(
                "transcript_quality",
                title=experiment.source.title,
                discipline=experiment.source.discipline,
                video_duration=f"{format_time(experiment.duration)} ({experiment.duration:.1f} s)",
                n_cues=str(len(transcript.cues)),
                timestamped_transcript=timestamped_lines(transcript.cues),
            ),
            outputs,
        )
    reviews = read_reviews(out / CSV_NAME)
    if len(scored) == len(usable):
        report = decide(config.curation, experiments, scored, reviews)
        kept_ids = set(report.kept) | set(report.videos_needed)
        notes.append(f"curation: the saved scores keep {len(kept_ids)} experiment(s)")
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
            f"curation: {len(usable) - len(scored)} transcript(s) not scored yet; counted as if all passed the "
            f"score rule: at most {len(kept_ids)} experiment(s) kept ({report.duration_rule})"
        )
    kept = [e for e in experiments if e.video_id in kept_ids]
    items = {"level1": 0, "level2": 0, "level3": 0}
    drafted: list[DraftItem] = []
    for experiment in kept:
        await asyncio.to_thread(_plan_experiment, config, experiment, plans, items, outputs, out, drafted)
    blind_items = items["level1"] + items["level2"] + items["level3"]
    if config.blind_samples:
        plans["blind_audit"].add("blind_audit", BLIND_INPUT, outputs, n=blind_items * config.blind_samples)
        if drafted:
            to_ask, answered, note = await _blind_requests(config, drafted)
            for prompt in to_ask:
                plans["blind_audit"].add("blind_audit", prompt, outputs)
            notes.append(
                f"blind audit of the {len(drafted)} item(s) already drafted: {answered} request(s) answered in "
                f"the cache (free), {len(to_ask)} to send" + (f" ({note})" if note else "")
            )
            blind_items += len(drafted)
    if not config.vlm:
        del plans["captions"]
    return _priced(config, plans, notes, len(experiments), len(kept), blind_items, speech)


def _plan_experiment(
    config: BuildConfig,
    experiment: LoadedExperiment,
    plans: dict[str, StagePlan],
    items: dict[str, int],
    outputs: dict[str, float],
    out: Path,
    drafted: list[DraftItem],
) -> None:
    """Add one experiment's calls to `plans`: stages not finished yet by their units (their items
    counted in `items`), finished stages by their items (into `drafted`, for the blind audit)."""
    transcript = experiment.transcript
    assert transcript is not None
    levels = config.levels
    if 1 in levels:
        saved = _saved(out, experiment.video_id, "level1")
        if saved is not None and saved.complete:
            drafted.extend(saved.items)
        else:
            sentences = segment_sentences(
                transcript, min_words=config.sentence_min_words, max_duration=config.sentence_max_seconds
            )
            units = [s for s in sentences if s.duration >= config.min_clip_seconds]
            per_unit = 2 * config.targets_per_sentence + 2
            items["level1"] += per_unit * len(units)
            for sentence in units:
                values = {"asr_caption": sentence.text, "qwen_caption": "(not available)"}
                for prompt_id in (
                    "g1_1_material_extraction", "g1_3_tool_extraction", "g1_5_quantity_mcq",
                    "g1_6_operation_alignment", "g1_7_operation_mcq",
                ):  # fmt: skip
                    plans["level1"].add(prompt_id, _fill(prompt_id, **values), outputs)
                for prompt_id in ("g1_2_material_mcq", "g1_4_tool_mcq"):
                    plans["level1"].add(
                        prompt_id, _fill(prompt_id, **values), outputs, n=config.targets_per_sentence
                    )
                if config.vlm:
                    plans["captions"].add("visual_caption", 85 * config.vlm_frames + 200, outputs)
    if 2 in levels:
        saved = _saved(out, experiment.video_id, "level2")
        if saved is not None and saved.complete:
            drafted.extend(saved.items)
        else:
            empty = load_prompt("g2_1_clip_segmentation").fill(asr_caption="")
            budget = transcript_budget(
                config.context_tokens, config.max_tokens, estimate_tokens("".join(t or "" for t in empty))
            )
            for window in transcript_windows(transcript.cues, budget):
                plans["level2"].add(
                    "g2_1_clip_segmentation",
                    _fill("g2_1_clip_segmentation", asr_caption=timestamped_lines(window)),
                    outputs,
                )
            narrated = sum(c.end - c.start for c in transcript.cues)
            segments = max(1, math.ceil(narrated / SEGMENT_SECONDS))
            per_segment = max(1, len(transcript.cues) // segments)
            sample = timestamped_lines(transcript.cues[:per_segment])
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
            items["level2"] += 4 * segments
    if 3 in levels and experiment.source.paper is not None:
        saved = _saved(out, experiment.video_id, "level3")
        if saved is not None and saved.complete:
            drafted.extend(saved.items)
            return
        try:
            sections = read_paper(experiment.source.paper, title=experiment.source.title).markdown()
        except PaperError:
            return
        plans["level3"].add("findings_summary", _fill("findings_summary", paper_sections=sections), outputs)
        plans["level3"].add(
            "level3_blanks",
            _fill("level3_blanks", paper_sections=sections, guidelines=text_file("g3_level3_guidelines.txt")),
            outputs,
        )
        items["level3"] += 2 * config.level3_questions


async def _blind_requests(config: BuildConfig, drafts: list[DraftItem]) -> tuple[list[str], int, str]:
    """The blind-audit prompts of already drafted items that the cache has not answered yet, the number
    it has answered, and a note when the cache could not be read (then every request is counted)."""
    from expvid.construction.audits import BLIND_PROMPT_ID, BLIND_STAGE, blind_messages
    from expvid.construction.llm import make_request, request_key
    from expvid.construction.retries import CURRENT_EXPERIMENT, RetryBook
    from expvid.construction.writer import finalize_item
    from expvid.models import create_backend
    from expvid.models.cache import CACHE_FILE_NAME, CACHE_ROUND
    from expvid.models.types import TextPart

    finals: dict[str, Any] = {}
    for draft in drafts:
        final = finalize_item(draft, config.seed)
        finals.setdefault(final.key, final)
    state = config.out.expanduser() / STATE_DIR
    backend: Any = None
    note = ""
    if not (state / "cache" / CACHE_FILE_NAME).is_file():
        note = "no response cache yet"
    else:
        try:
            options = {**config.backend_options, "cache_dir": state / "cache"}
            backend = create_backend(config.blind_llm or config.llm, **options)
        except Exception as error:  # a backend that cannot be made here is the real run's problem
            note = f"cache not read: {error}"
    retries = RetryBook(state, retry_failed=config.retry_failed)
    retries.plan_redo(
        list(config.redo)
    )  # the epochs the run will start (not written: a dry run writes nothing)
    lookup = getattr(backend, "request_hash", None)
    cache = getattr(backend, "cache", None)

    def plan() -> tuple[list[str], int]:
        to_ask: list[str] = []
        answered = 0
        for final in finals.values():
            CURRENT_EXPERIMENT.set(final.draft.video_id)  # its `--redo blind_audit:ID` epoch
            messages = blind_messages(final.item)
            for seed in range(config.blind_samples):
                request = make_request(
                    messages, temperature=config.blind_temperature, max_tokens=config.max_tokens, seed=seed,
                    stage=BLIND_STAGE, prompt_id=BLIND_PROMPT_ID,
                )  # fmt: skip
                round_ = retries.round_for(BLIND_STAGE, request_key(request))
                if round_:
                    request.metadata[CACHE_ROUND] = round_
                if lookup is not None and cache is not None and cache.get(lookup(request)) is not None:
                    answered += 1
                else:
                    to_ask.append(
                        "".join(p.text for m in messages for p in m.content if isinstance(p, TextPart))
                    )
        return to_ask, answered

    try:
        to_ask, answered = await asyncio.to_thread(plan)
    finally:
        if backend is not None:
            await backend.aclose()
    return to_ask, answered, note


def _priced(
    config: BuildConfig,
    plans: dict[str, StagePlan],
    notes: list[str],
    n_experiments: int,
    n_kept: int,
    blind_items: int,
    speech: TranscriptionPlan | None = None,
) -> dict[str, Any]:
    from expvid.construction.pipeline import effective_prices

    prices: dict[str, Price] = effective_prices(config)
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
