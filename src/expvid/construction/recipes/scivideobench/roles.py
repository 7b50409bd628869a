"""SciVideoBench section 2.2's model roles, each a cached, counted stage per experiment.

QA generator (two calls: the analysis, then the questions; it sees the video's frames, or the frames
as one video, as the paper's generator does, or only the text with `-R generator=text`), evaluator,
visual comparer, refiner, and the evaluator again on every question whose options the refiner
rewrote (a twin the refiner introduces is caught there, not released). Each call goes through
`LLMClient` (reply validated by `checks.py`, re-asked with the problem when unusable, counted by role
and stage, cached by request); each role's output is saved per experiment (`RoleStore`) with a
fingerprint chained from the previous role's (and its drafts' content), so a re-run reuses finished
roles and a changed prompt or input redoes exactly the roles after it. A unit that fails is carried
to the end of the chain: no later role is saved while one failed, the build lists it and exits
non-zero, and the next run asks exactly that unit again (the others come from the cache).
A question the evaluator cannot answer, answers differently, or the comparer finds not grounded in
the video is dropped and counted by reason, as is a quantitative one whose options could not hide
its answer (`numeric_options`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from expvid.construction.llm import Drafted, DraftFailure, LLMClient, json_parser
from expvid.construction.prompts import Prompt
from expvid.construction.recipes.scivideobench import prompts as recipe_prompts
from expvid.construction.recipes.scivideobench.checks import (
    check_analysis,
    check_comparison,
    check_evaluation,
    check_generated,
    check_refined,
)
from expvid.construction.recipes.scivideobench.config import SvbBuildConfig
from expvid.construction.recipes.scivideobench.drafts import RoleOutput, RoleStore, SvbDraft, new_draft
from expvid.construction.recipes.scivideobench.exemplars import counts_text, exemplars_text
from expvid.construction.recipes.scivideobench.inputs import Experiment
from expvid.construction.recipes.scivideobench.numeric_options import (
    N_OPTIONS,
    ComparableError,
    numeric_options,
    value_decimals,
)
from expvid.construction.recipes.scivideobench.option_checks import TwinCheck
from expvid.construction.recipes.scivideobench.schemas import (
    Analysis,
    Comparison,
    DraftQuestion,
    Evaluation,
    Generated,
    Refined,
    clock,
)
from expvid.models.hf import FRAME_TIMES_KEY
from expvid.models.types import ContentPart, InputMode, Message, TextPart

#: Drop reason of a quantitative question whose options could not hide the answer's rank.
NO_ROOM = "quantitative: nine distractors of the answer's precision and roundness do not fit"

#: role -> (prompt, phase of its calls: what `--redo` and failed-unit rounds go by, stage in the report)
ROLE_CALLS: dict[str, tuple[str, str, str]] = {
    "evaluate": ("svb_evaluate", "svb_evaluate", "svb_evaluate"),
    "compare": ("svb_compare", "svb_compare", "svb_compare"),
    "refine": ("svb_refine", "svb_refine", "svb_refine"),
    # the evaluator again, on what the refiner rewrote: an evaluator call (`--redo evaluator`)
    "recheck": ("svb_evaluate", "svb_evaluate", "svb_recheck"),
}

Step = Callable[[Experiment, SvbDraft], Awaitable[tuple[SvbDraft | None, str, DraftFailure | None]]]


@dataclass(frozen=True)
class View:
    """What a call shows of the video: parts before the prompt's text, and how they are sent."""

    parts: Sequence[ContentPart] = ()
    input_mode: InputMode = "images"
    metadata: dict[str, Any] | None = None


def drafts_digest(drafts: list[SvbDraft]) -> str:
    """Content identity of a role's drafts (the next role's fingerprint depends on it)."""
    payload = json.dumps([d.model_dump(mode="json", exclude={"drafts"}) for d in drafts], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


@dataclass
class Roles:
    config: SvbBuildConfig
    llm: LLMClient
    store: RoleStore
    exemplars: dict[str, list[dict[str, str]]]
    calls: asyncio.Semaphore
    #: The twin check of every text option set, at generation and after the refiner (one embedding
    #: table for the whole build).
    twins: TwinCheck = field(default_factory=TwinCheck)

    def prompt(self, prompt_id: str) -> Prompt:
        return recipe_prompts.load(prompt_id, self.config.prompts)

    async def ask(
        self,
        prompt_id: str,
        values: dict[str, str],
        parse: Any,
        *,
        view: View = View(),
        phase: str,
        stage: str | None = None,
    ) -> Drafted[Any]:
        prompt = self.prompt(prompt_id)
        system, user = prompt.fill(**values)
        messages = [Message(role="system", content=[TextPart(text=system)])] if system else []
        messages.append(Message(role="user", content=[*view.parts, TextPart(text=user)]))
        async with self.calls:
            return await self.llm.ask(
                messages,
                parse,
                prompt_id=prompt_id,
                prompt_sha256=prompt.sha256,
                stage=stage or prompt_id,
                phase=phase,
                input_mode=view.input_mode,
                metadata=view.metadata,
            )

    def paper(self, experiment: Experiment) -> str:
        text = experiment.paper[: self.config.paper_chars]
        return text + ("\n[... paper truncated ...]" if len(experiment.paper) > len(text) else "")

    def prompt_hashes(self, *ids: str) -> list[str]:
        return [self.prompt(prompt_id).sha256 for prompt_id in ids]

    def redo_epoch(self, phase: str) -> list[int]:
        """The `--redo` epoch of `phase` for the current experiment as a fingerprint part: a redone
        role is not reused from its saved output (none when 0, so fingerprints from before any
        redo stay valid)."""
        retries = self.llm.retries
        epoch = retries.epoch(phase) if retries is not None else 0
        return [epoch] if epoch else []

    async def frames_view(self, experiment: Experiment) -> View:
        """The labelled frames the evaluator and the comparer see."""
        return View(await experiment.frames(self.config.frames, self.config.frame_max_side))

    async def generator_view(self, experiment: Experiment) -> View:
        """What the QA generator sees of the video (`config.generator`)."""
        mode = self.config.generator
        if mode == "text":
            return View()
        if mode == "frames":
            return await self.frames_view(experiment)
        images, times = await experiment.video_frames(self.config.frames, self.config.frame_max_side)
        header = self.prompt("svb_video").fill(
            count=str(len(images)),
            duration=f"{experiment.duration:.0f} s",
            times=", ".join(clock(t) for t in times),
        )[1]
        return View([TextPart(text=header), *images], "video", {FRAME_TIMES_KEY: times})

    # -- QA generator ------------------------------------------------------------------------------

    async def generate(self, experiment: Experiment) -> RoleOutput:
        video_prompt = ["svb_video"] if self.config.generator == "video" else []
        fingerprint = self.config.fingerprint(
            "generate",
            experiment.stamp(),
            self.prompt_hashes("svb_analysis", "svb_generate", *video_prompt),
            self.exemplars,
            self.llm.model,
            *self.redo_epoch("svb_generate"),
        )

        async def compute(output: RoleOutput) -> None:
            duration = experiment.duration
            base = {
                "title": experiment.source.title,
                "discipline": experiment.discipline_text,
                "transcript": experiment.transcript_lines(),
                "paper": self.paper(experiment),
            }
            try:
                view = await self.generator_view(experiment)
                analysis = await self.ask(
                    "svb_analysis",
                    base,
                    json_parser(Analysis, lambda a: check_analysis(a, duration)),
                    view=view,
                    phase="svb_generate",
                )
                generated = await self.ask(
                    "svb_generate",
                    {
                        "counts": counts_text(self.config.per_type),
                        "exemplars": exemplars_text(self.exemplars, self.config.per_type),
                        "analysis": json.dumps(analysis.value.model_dump(), ensure_ascii=False, indent=1),
                        "transcript": base["transcript"],
                        "paper": base["paper"],
                    },
                    json_parser(
                        Generated, lambda g: check_generated(g, self.config.per_type, duration, self.twins)
                    ),
                    view=view,
                    phase="svb_generate",
                )
            except DraftFailure as failure:
                output.problem(f"QA generator: {failure}", transient=failure.transient)
                return
            output.value = analysis.value.model_dump()
            provenance = [analysis.provenance(), generated.provenance()]
            for question in generated.value.questions:
                draft = self._draft(experiment, question, output)
                if draft is None:
                    continue
                draft.evidence = [span.model_dump() for span in question.evidence]
                draft.drafts = [{**p, "role": "qa_generator"} for p in provenance]
                output.drafts.append(draft)

        return await self.store.run(experiment.video_id, "generate", fingerprint, compute)

    def _draft(self, experiment: Experiment, question: DraftQuestion, output: RoleOutput) -> SvbDraft | None:
        if question.type != "quantitative":
            assert question.answer is not None and question.distractors is not None
            return new_draft(
                experiment.video_id,
                question.type,
                question.question,
                question.answer.strip(),
                list(question.distractors),
            )
        assert question.value is not None
        decimals = question.decimals if question.decimals is not None else value_decimals(question.value)
        try:
            made = numeric_options(
                question.value,
                decimals,
                question.unit,
                relative_sigma=self.config.noise,
                seed=f"{experiment.video_id}:{question.question}",
                about_precision=question.about_precision,
            )
        except ComparableError as error:
            output.drop("quantitative", NO_ROOM)
            output.problem(f"QA generator: {question.question[:80]!r} dropped: {error}", failed=False)
            return None
        return new_draft(
            experiment.video_id,
            "quantitative",
            question.question,
            made.answer,
            made.distractors,
            quantity={
                "value": question.value,
                "unit": question.unit,
                "decimals": decimals,
                "noise_relative_sigma": self.config.noise,
                "about_precision": question.about_precision,
                **made.describe(decimals),
            },
        )

    # -- evaluator, comparer, refiner, evaluator again (per draft) ----------------------------------

    async def verify(self, experiment: Experiment, generated: RoleOutput) -> RoleOutput:
        """Evaluator -> visual comparer -> refiner -> evaluator on rewritten options (a saved stage each)."""
        evaluated = await self._per_draft(experiment, generated, "evaluate", self._evaluate)
        compared = await self._per_draft(experiment, evaluated, "compare", self._compare)
        refined = await self._per_draft(experiment, compared, "refine", self._refine)
        return await self._per_draft(experiment, refined, "recheck", self._recheck)

    async def _per_draft(
        self, experiment: Experiment, previous: RoleOutput, role: str, step: Step
    ) -> RoleOutput:
        prompt_id, phase, _stage = ROLE_CALLS[role]
        fingerprint = self.config.fingerprint(
            role,
            previous.fingerprint,
            drafts_digest(previous.drafts),
            self.prompt_hashes(prompt_id),
            self.llm.model,
            *self.redo_epoch(phase),
        )

        async def compute(output: RoleOutput) -> None:
            for task, reasons in previous.dropped.items():
                for reason, count in reasons.items():
                    output.dropped.setdefault(task, {})[reason] = count
            # a failed unit of an earlier role stays a failure of this one: nothing after it is
            # saved, so the next run carries the retried unit through every later role
            output.problems = list(previous.problems)
            results = await asyncio.gather(*(step(experiment, draft) for draft in previous.drafts))
            for draft, (kept, reason, problem) in zip(previous.drafts, results, strict=True):
                if problem is not None:
                    output.problem(f"{role} {draft.uid}: {problem.message}", transient=problem.transient)
                elif kept is None:
                    output.drop(draft.task, reason)
                else:
                    output.drafts.append(kept)

        return await self.store.run(experiment.video_id, role, fingerprint, compute)

    async def _evaluate(
        self, experiment: Experiment, draft: SvbDraft
    ) -> tuple[SvbDraft | None, str, DraftFailure | None]:
        return await self._verdict(experiment, draft, after_refiner=False)

    async def _verdict(
        self, experiment: Experiment, draft: SvbDraft, *, after_refiner: bool
    ) -> tuple[SvbDraft | None, str, DraftFailure | None]:
        """The evaluator answers the draft's question from its options: kept when it picks the answer."""
        stage, role, who = (
            ("svb_recheck", "evaluator_after_refiner", "evaluator after the refiner")
            if after_refiner
            else ("svb_evaluate", "evaluator", "evaluator")
        )
        options, letter = draft.options()
        try:
            reply = await self.ask(
                "svb_evaluate",
                {
                    "title": experiment.source.title,
                    "transcript": experiment.transcript_lines(),
                    "paper": self.paper(experiment),
                    "question": draft.question,
                    "options": _options_text(options),
                },
                json_parser(Evaluation, lambda e: check_evaluation(e, options)),
                view=await self.frames_view(experiment),
                phase="svb_evaluate",
                stage=stage,
            )
        except DraftFailure as failure:
            return None, "", failure
        evaluation = reply.value
        kept = draft.model_copy(deep=True)
        verdict = {**evaluation.model_dump(), "correct_letter": letter}
        if after_refiner:
            kept.recheck = verdict
        else:
            kept.evaluation = verdict
        kept.drafts.append({**reply.provenance(), "role": role})
        if not evaluation.answerable:
            return None, f"{who}: unanswerable", None
        if evaluation.answer != letter:
            return None, f"{who}: chose another option", None
        return kept, "", None

    async def _compare(
        self, experiment: Experiment, draft: SvbDraft
    ) -> tuple[SvbDraft | None, str, DraftFailure | None]:
        duration = experiment.duration
        try:
            reply = await self.ask(
                "svb_compare",
                {
                    "title": experiment.source.title,
                    "question": draft.question,
                    "answer": draft.answer,
                    "rationale": str((draft.evaluation or {}).get("rationale", "")),
                    "transcript": experiment.transcript_lines(),
                },
                json_parser(Comparison, lambda c: check_comparison(c, duration)),
                view=await self.frames_view(experiment),
                phase="svb_compare",
            )
        except DraftFailure as failure:
            return None, "", failure
        kept = draft.model_copy(deep=True)
        kept.comparison = reply.value.model_dump()
        kept.drafts.append({**reply.provenance(), "role": "visual_comparer"})
        if not reply.value.grounded:
            return None, "visual comparer: not grounded in the video", None
        return kept, "", None

    async def _refine(
        self, experiment: Experiment, draft: SvbDraft
    ) -> tuple[SvbDraft | None, str, DraftFailure | None]:
        quantitative = draft.task == "quantitative"
        cues = (draft.comparison or {}).get("cues", [])
        rule = (
            "Keep the numeric options as they are (they are generated from the answer); return an empty list of distractors."
            if quantitative
            else f"Sharpen the {N_OPTIONS - 1} distractors: each scientifically plausible, wrong, of the answer's "
            "length and style, none a paraphrase of the answer; return all of them."
        )
        try:
            reply = await self.ask(
                "svb_refine",
                {
                    "question_type": draft.question_type,
                    "question": draft.question,
                    "answer": draft.answer,
                    "distractors": "\n".join(f"- {d}" for d in draft.distractors),
                    "cues": "\n".join(
                        f"- {c['cue']} ({'visible' if c.get('visible') else 'not visible'}"
                        f"{', at ' + c['start'] + ('-' + c['end'] if c.get('end') else '') if c.get('start') else ''})"
                        for c in cues
                    ),
                    "distractor_rule": rule,
                },
                json_parser(
                    Refined,
                    lambda r: check_refined(r, draft.answer, quantitative, experiment.duration, self.twins),
                ),
                phase="svb_refine",
            )
        except DraftFailure as failure:
            return None, "", failure
        kept = draft.model_copy(deep=True)
        kept.question = reply.value.question
        if not quantitative and reply.value.distractors and reply.value.distractors != draft.distractors:
            kept.distractors = list(reply.value.distractors)
            kept.options_rewritten = True
        kept.drafts.append({**reply.provenance(), "role": "refiner"})
        return kept, "", None

    async def _recheck(
        self, experiment: Experiment, draft: SvbDraft
    ) -> tuple[SvbDraft | None, str, DraftFailure | None]:
        """The evaluator on the refined question with the refiner's options (only when it rewrote them)."""
        if not draft.options_rewritten:
            return draft, "", None
        return await self._verdict(experiment, draft, after_refiner=True)


def _options_text(options: dict[str, str]) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())
