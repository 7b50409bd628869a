"""`--dry-run` of the SciVideoBench recipe: calls, tokens, audio minutes and cost, before anything is paid.

Nothing is sent and nothing is written. Per experiment:

- speech-to-text: minutes of audio when it has no transcript and its narration is not in the
  transcript cache (known from the cache's index without decoding: free), priced per minute;
- when the candidate directory has a response cache, the recipe's own code runs on the real inputs
  against that cache only (`CacheOnly`): each role's saved output is reused as a real run would
  reuse it, each request is built exactly as the build builds it (prompts filled with the real
  transcript and paper, the real frames, the `--redo` and failed-unit rounds) and looked up; a reply
  found there is free and counted as cached, a request not found is counted to send with its real
  size, and what follows it (the questions a missing generator reply would write, the later roles of
  a question whose evaluator reply is missing) is counted at its upper bound, as below. So a finished
  build forecasts 0 calls and a half-finished one exactly the requests still to send;
- otherwise, upper bounds: the QA generator's two calls (each with the frames unless
  `-R generator=text`); evaluator, comparer and refiner once per question asked for (dropped
  questions skip the later roles); the evaluator again once per text question (it is asked when the
  refiner rewrites the options); the blind audit `blind_samples` per question. Prompt tokens are the
  filled prompt's characters / 4 (transcript and paper included; a transcript not made yet is taken
  as 150 words a minute) plus `IMAGE_TOKENS` per frame.

Output tokens are typical reply sizes per role (no reasoning tokens: run a pilot for a reasoning model).
The estimate also prices the other generator mode: what showing the generator the frames adds (or
what `-R generator=text` saves), from the generator calls counted and `frames` x `IMAGE_TOKENS` each.
"""

from __future__ import annotations

import asyncio
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from expvid.construction.accounting import Ledger
from expvid.construction.llm import LLMClient
from expvid.construction.recipes.scivideobench import prompts as recipe_prompts
from expvid.construction.recipes.scivideobench.config import REDO_PHASES, SvbBuildConfig, backend_options
from expvid.construction.recipes.scivideobench.disciplines import DisciplineMap
from expvid.construction.recipes.scivideobench.drafts import RoleStore
from expvid.construction.recipes.scivideobench.exemplars import exemplars_text
from expvid.construction.recipes.scivideobench.inputs import Experiment, load_experiment
from expvid.construction.recipes.scivideobench.option_checks import TwinCheck
from expvid.construction.recipes.scivideobench.roles import Roles
from expvid.construction.retries import CURRENT_EXPERIMENT, RetryBook
from expvid.construction.sources import SourceExperiment
from expvid.construction.speech.sources import plan_transcripts
from expvid.media.errors import MediaError
from expvid.media.sampler import probe
from expvid.models.types import BackendError, GenerateRequest, GenerateResponse, ImagePart, TextPart

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
    "svb_recheck": 500,
    "blind": 8,
}
#: Prompt id (a request's `stage`) -> the row of the estimate it is counted in.
ROW_OF = {
    "svb_analysis": "svb_generate",
    "svb_generate": "svb_generate",
    "svb_evaluate": "svb_evaluate",
    "svb_compare": "svb_compare",
    "svb_refine": "svb_refine",
    "svb_recheck": "svb_recheck",
    "scivideobench_official_prompt": "blind_audit",
}
ROWS = ("svb_generate", "svb_evaluate", "svb_compare", "svb_refine", "svb_recheck", "blind_audit")
#: The role after each (a request not cached: what follows it is counted at its upper bound).
LATER = {"svb_evaluate": "svb_compare", "svb_compare": "svb_refine", "svb_refine": "svb_recheck"}


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


@dataclass
class Rows:
    """Calls to send (and their tokens) and replies found in the cache, per row."""

    calls: dict[str, dict[str, int]] = field(default_factory=dict)

    def row(self, stage: str) -> dict[str, int]:
        return self.calls.setdefault(
            stage, {"calls": 0, "upper_bound": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0}
        )

    def add(self, stage: str, calls: int, prompt: int, completion: int, *, bound: bool = True) -> None:
        """`calls` more to send; `bound`: counted at their upper bound (not a request built exactly)."""
        row = self.row(stage)
        row["calls"] += calls
        if bound:
            row["upper_bound"] += calls
        row["prompt_tokens"] += calls * prompt
        row["completion_tokens"] += calls * completion


class CacheOnly:
    """A backend that answers from the build's response cache and from nothing else: a request not
    there is recorded (as the build would send it) and fails, so the recipe's code stops that unit
    exactly where a real run would have to ask the model."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.misses: list[GenerateRequest] = []

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        hit = await asyncio.to_thread(self.inner.cache.get, self.inner.request_hash(request))
        if hit is None:
            self.misses.append(request)
            raise BackendError("not in the response cache (a dry run asks no model)")
        return hit

    def describe(self) -> dict[str, Any]:
        return dict(self.inner.describe())

    async def aclose(self) -> None:
        return None


def _request_tokens(request: GenerateRequest) -> int:
    text = sum(len(p.text) for m in request.messages for p in m.content if isinstance(p, TextPart))
    images = sum(1 for m in request.messages for p in m.content if isinstance(p, ImagePart))
    return text // CHARS_PER_TOKEN + 1 + images * IMAGE_TOKENS


@dataclass
class UpperBound:
    """The per-role upper bounds of one experiment, from the sizes of its texts."""

    config: SvbBuildConfig
    exemplars: dict[str, list[dict[str, str]]]
    transcript_chars: int
    paper_chars: InitVar[int]
    #: Characters of context every prompt carries: the transcript and the paper's head.
    context: int = field(init=False)
    #: The generator's view of the video: the frames, unless -R generator=text.
    generator_frames: int = field(init=False)

    def __post_init__(self, paper_chars: int) -> None:
        self.context = self.transcript_chars + min(self.config.paper_chars, paper_chars)
        self.generator_frames = 0 if self.config.generator == "text" else self.config.frames * IMAGE_TOKENS

    def analysis(self, rows: Rows) -> None:
        prompt = recipe_prompts.load("svb_analysis", self.config.prompts)
        rows.add(
            "svb_generate",
            1,
            _tokens(prompt.user) + self.context // CHARS_PER_TOKEN + self.generator_frames,
            OUTPUT_TOKENS["svb_analysis"],
        )

    def generate(self, rows: Rows) -> None:
        prompt = recipe_prompts.load("svb_generate", self.config.prompts)
        tokens = (
            _tokens(prompt.user + exemplars_text(self.exemplars, self.config.per_type))
            + self.context // CHARS_PER_TOKEN
            + OUTPUT_TOKENS["svb_analysis"]
            + self.generator_frames
        )
        rows.add("svb_generate", 1, tokens, OUTPUT_TOKENS["svb_generate"])

    def after(self, rows: Rows, phase: str, questions: int, text_questions: int | None = None) -> None:
        """`questions` questions' calls of `phase` and every role after it (the blind audit last);
        `text_questions` of them may be asked the evaluator again (all of them when not known)."""
        if questions <= 0:
            return
        frames = self.config.frames * IMAGE_TOKENS
        evaluate = self.context // CHARS_PER_TOKEN + frames
        roles = (
            ("svb_evaluate", "svb_evaluate", evaluate, questions),
            (
                "svb_compare",
                "svb_compare",
                self.transcript_chars // CHARS_PER_TOKEN + frames + 400,
                questions,
            ),
            ("svb_refine", "svb_refine", 600, questions),
            (
                "svb_recheck",
                "svb_evaluate",
                evaluate,
                questions if text_questions is None else text_questions,
            ),
        )
        names = [name for name, *_ in roles]
        first = names.index(phase) if phase in names else len(names)
        for row, prompt_id, extra, count in roles[first:]:
            template = recipe_prompts.load(prompt_id, self.config.prompts)
            rows.add(row, count, _tokens(template.user) + extra, OUTPUT_TOKENS[row])
        rows.add("blind_audit", questions * self.config.blind_samples, 350, OUTPUT_TOKENS["blind"])

    def whole(self, rows: Rows) -> None:
        self.analysis(rows)
        self.generate(rows)
        per_type = self.config.per_type
        self.after(
            rows, "svb_evaluate", sum(per_type.values()), per_type["conceptual"] + per_type["hypothetical"]
        )


@dataclass
class Replay:
    """The recipe's roles run against the response cache only (see the module docstring)."""

    config: SvbBuildConfig
    exemplars: dict[str, list[dict[str, str]]]
    state: Path
    retries: RetryBook
    store: RoleStore = field(init=False)
    backends: dict[str, Any] = field(init=False, default_factory=dict)
    ledger: Ledger = field(init=False, default_factory=Ledger)
    note: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.store = RoleStore(self.state / "svb", read_only=True)

    @classmethod
    async def open(
        cls,
        config: SvbBuildConfig,
        exemplars: dict[str, list[dict[str, str]]],
        state: Path,
        retries: RetryBook,
    ) -> Replay | None:
        from expvid.models import create_backend
        from expvid.models.cache import CACHE_FILE_NAME

        if not (state / "cache" / CACHE_FILE_NAME).is_file():
            return None
        replay = cls(config, exemplars, state, retries)
        options = {"concurrency": config.concurrency, **config.backend_options, "cache_dir": state / "cache"}
        try:
            replay.backends["llm"] = create_backend(config.llm, **backend_options(config, state / "cache"))
            if config.blind_samples and config.blind_llm and config.blind_llm != config.llm:
                replay.backends["blind"] = create_backend(config.blind_llm, **options)
        except Exception as error:  # a backend that cannot be made here is the real run's problem
            await replay.aclose()
            replay.note = f"response cache not read: {error}"
            return replay
        return replay

    async def aclose(self) -> None:
        for backend in self.backends.values():
            await backend.aclose()
        self.backends = {}

    def _client(self, backend: CacheOnly, role: str) -> LLMClient:
        return LLMClient(backend, role, self.config, self.ledger, self.retries)

    async def run(self, experiment: Experiment, bound: UpperBound, rows: Rows) -> None:
        """Count one experiment's requests: cached, to send (real sizes), and upper bounds after a miss."""
        from expvid.construction.audits import AuditResult
        from expvid.construction.recipes.scivideobench.audits import blind_audit
        from expvid.construction.recipes.scivideobench.writer import record
        from expvid.suites.scivideobench.loader import record_to_item

        CURRENT_EXPERIMENT.set(experiment.video_id)
        llm = CacheOnly(self.backends["llm"])
        blind_backend = CacheOnly(self.backends.get("blind", self.backends["llm"]))
        roles = Roles(
            self.config,
            self._client(llm, "llm"),
            self.store,
            self.exemplars,
            asyncio.Semaphore(8),
            TwinCheck.with_model(),  # the build's check: a reply it would re-ask is re-asked here too
        )
        generated = await roles.generate(experiment)
        if not generated.complete:
            missed = {str(r.metadata.get("stage")) for r in llm.misses}
            if "svb_analysis" in missed:
                bound.generate(rows)  # the analysis reply is missing: the generator's second call too
            if missed:  # (a unit that fails from the cache itself, with --keep-failed, sends nothing)
                per_type = self.config.per_type
                bound.after(
                    rows,
                    "svb_evaluate",
                    sum(per_type.values()),
                    per_type["conceptual"] + per_type["hypothetical"],
                )
        else:
            verified = await roles.verify(experiment, generated)
            for request in llm.misses:  # a unit stopped here: its question's later roles are bounds
                stage = str(request.metadata.get("stage"))
                bound.after(rows, LATER.get(stage, "blind"), 1)
            items = [record_to_item(record(d, experiment), self.state.parent) for d in verified.drafts]
            await blind_audit(
                self._client(blind_backend, "blind") if self.config.blind_samples else None,
                items,
                AuditResult(),
                samples=self.config.blind_samples,
                temperature=self.config.blind_temperature,
                margin=self.config.blind_margin,
                calls=asyncio.Semaphore(8),
            )
        for request in [*llm.misses, *blind_backend.misses]:
            prompt_id = str(request.metadata.get("stage"))
            completion = OUTPUT_TOKENS.get(prompt_id, OUTPUT_TOKENS["blind"])
            rows.add(ROW_OF.get(prompt_id, prompt_id), 1, _request_tokens(request), completion, bound=False)


def _cached_replies(ledger: Ledger, rows: Rows) -> int:
    total = 0
    for (_role, stage), counts in ledger.stages.items():
        rows.row(ROW_OF.get(stage, stage))["cached"] += counts.cache_hits
        total += counts.cache_hits
    return total


async def estimate(
    config: SvbBuildConfig,
    exemplars: dict[str, list[dict[str, str]]],
    sources: list[SourceExperiment],
    state: Path,
) -> dict[str, Any]:
    retries = RetryBook(state, retry_failed=config.retry_failed, read_only=True)
    retries.plan_redo(config.redo_phases(), allowed=tuple(REDO_PHASES.values()))
    speech = await asyncio.to_thread(plan_transcripts, sources, config.stt, state, retries.epochs)
    questions = sum(config.per_type.values())
    rows = Rows()
    for stage in ROWS:
        rows.row(stage)
    skipped: dict[str, str] = {}
    disciplines = DisciplineMap.load(config.disciplines)
    replay = await Replay.open(config, exemplars, state, retries)
    replayed = 0
    try:
        for source in speech.sources:
            if source.video is None:
                skipped[source.video_id] = "no video"
                continue
            try:
                disciplines.place(source.discipline, None)
            except ValueError as error:
                skipped[source.video_id] = f"{source.folder / 'meta.json'}: {error}"
                continue
            if source.transcript is None and source.video_id not in speech.pending:
                skipped[source.video_id] = speech.unreadable.get(
                    source.video_id, "no transcript and no -R stt=..."
                )
                continue
            paper = source.paper.stat().st_size if source.paper else 0
            if source.transcript is None:
                duration = speech.pending[source.video_id]
                UpperBound(config, exemplars, int(duration / 60 * 150 * 6), paper).whole(rows)
                continue
            if replay is None or not replay.backends:
                try:
                    await asyncio.to_thread(probe, source.video)
                except MediaError as error:
                    skipped[source.video_id] = str(error)
                    continue
                UpperBound(config, exemplars, source.transcript.stat().st_size, paper).whole(rows)
                continue
            experiment = await load_experiment(source, speech.provenance.get(source.video_id), disciplines)
            if experiment.problems:
                skipped[source.video_id] = "; ".join(experiment.problems)
                continue
            bound = UpperBound(config, exemplars, len(experiment.transcript_lines()), len(experiment.paper))
            await replay.run(experiment, bound, rows)
            replayed += 1
    finally:
        if replay is not None:
            await replay.aclose()
    cached = _cached_replies(replay.ledger, rows) if replay is not None else 0
    reused = sum(replay.store.reused.values()) if replay is not None else 0

    def priced(role: str, row: dict[str, int]) -> float | None:
        price = config.prices.get(role) or (
            config.prices.get("llm") if role == "blind" and config.blind_llm in (None, config.llm) else None
        )
        if not row["calls"]:
            return 0.0
        return None if price is None else round(price.cost(row["prompt_tokens"], row["completion_tokens"]), 6)

    stages = {
        stage: {**row, "cost": priced("blind" if stage == "blind_audit" else "llm", row)}
        for stage, row in rows.calls.items()
        if row["calls"] or row["cached"] or stage in ROWS
    }
    speech_cost = speech.cost()
    costs = [s["cost"] for s in stages.values()] + [speech_cost]
    total = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)
    experiments = len(sources) - len(skipped)
    notes = [
        f"prompt tokens = characters / {CHARS_PER_TOKEN} + {IMAGE_TOKENS} per frame; output tokens are typical reply sizes",
    ]
    if replay is None:
        notes.append(
            "no response cache yet: evaluator, comparer, refiner and blind audit are counted for every question "
            "asked for (an upper bound)"
        )
    elif replay.note:
        notes.append(f"{replay.note}: every call counted at its upper bound")
    else:
        notes.append(
            f"{replayed} experiment(s) replayed against the response cache: {cached} reply(ies) found cached "
            f"(free), {reused} role output(s) reused from earlier runs; what follows a reply not cached is "
            "counted at its upper bound"
        )
    speech_note = speech.note()
    if speech_note:
        notes.insert(0, speech_note)
    return {
        "recipe": "scivideobench",
        "experiments": experiments,
        "skipped": skipped,
        "questions_asked_for": questions * experiments,
        "stages": stages,
        "cached_replies": cached,
        "reused_outputs": reused,
        "speech": {
            "engine": config.stt.describe() if config.stt else None,
            "videos": len(speech.pending),
            "minutes": round(speech.minutes, 2),
            "cached_minutes": round(speech.cached_minutes, 2),
            "cost": speech_cost,
        },
        "total_cost": total,
        "generator_view": _other_view(config, rows.calls["svb_generate"]["calls"], total),
        "notes": notes,
    }


def _other_view(config: SvbBuildConfig, generator_calls: int, total: float | None) -> dict[str, Any]:
    """The same estimate with the generator's other view of the video: frames priced both ways."""
    tokens = generator_calls * config.frames * IMAGE_TOKENS
    other = "text" if config.generator != "text" else "frames"
    sign = -1 if other == "text" else 1
    price = config.prices.get("llm")
    delta = None if price is None else round(price.cost(tokens, 0), 6)
    return {
        "mode": config.generator,
        "other": other,
        "frame_tokens": tokens,
        "other_total_cost": None if total is None or delta is None else round(total + sign * delta, 6),
    }


def estimate_markdown(estimate: dict[str, Any]) -> str:
    def money(value: float | None) -> str:
        return "unknown (no price)" if value is None else f"${value:.4f}"

    lines = [
        f"# Estimate: SciVideoBench recipe, {estimate['experiments']} experiment(s)",
        "",
        "| stage | calls | of them at most | found cached (free) | input tokens | output tokens | cost |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for stage, row in estimate["stages"].items():
        lines.append(
            f"| {stage} | {row['calls']} | {row['upper_bound']} | {row['cached']} | {row['prompt_tokens']} "
            f"| {row['completion_tokens']} "
            f"| {money(row['cost'])} |"
        )
    speech = estimate["speech"]
    if speech["engine"]:
        lines.append(
            f"| speech-to-text ({speech['engine']['engine']}) | {speech['videos']} video(s), {speech['minutes']} min "
            f"| | {speech['cached_minutes']} min | | | {money(speech['cost'])} |"
        )
    lines += ["", f"Total: {money(estimate['total_cost'])}", ""]
    view = estimate["generator_view"]
    change = "without" if view["other"] == "text" else "with"
    lines += [
        f"QA generator sees: {view['mode']}. With -R generator={view['other']} ({change} the "
        f"{view['frame_tokens']} frame tokens of its calls): {money(view['other_total_cost'])}",
        "",
    ]
    lines += [f"- {note}" for note in estimate["notes"]]
    lines += [f"- skipped {vid}: {why}" for vid, why in estimate["skipped"].items()]
    return "\n".join(lines) + "\n"
