"""SciVideoBench section 2.2's model roles, each a cached, counted stage per experiment.

QA generator (two calls: the analysis, then the questions), evaluator, visual comparer, refiner.
Each call goes through `LLMClient` (reply validated, re-asked with the problem when unusable,
counted by role and stage, cached by request); each role's output is saved per experiment
(`RoleStore`) with a fingerprint chained from the previous role's, so a re-run reuses finished roles
and a changed prompt or input redoes exactly the roles after it. A question the evaluator cannot
answer, answers differently, or the comparer finds not grounded in the video is dropped and counted
by reason.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.construction.llm import Drafted, DraftFailure, InvalidReply, LLMClient, json_parser
from expvid.construction.prompts import Prompt
from expvid.construction.recipes.scivideobench import prompts as recipe_prompts
from expvid.construction.recipes.scivideobench.config import QUESTION_TYPES, SvbBuildConfig
from expvid.construction.recipes.scivideobench.drafts import RoleOutput, RoleStore, SvbDraft, new_draft
from expvid.construction.recipes.scivideobench.inputs import Experiment
from expvid.construction.recipes.scivideobench.options import N_OPTIONS, gaussian_distractors, number_text
from expvid.construction.recipes.scivideobench.schemas import (
    Analysis,
    Comparison,
    Evaluation,
    Generated,
    Refined,
    clock_seconds,
)
from expvid.construction.schemas import norm_text
from expvid.models.types import ContentPart, Message, TextPart

_TIME = re.compile(r"(?<![\d:])(\d{1,2}):([0-5]\d)(?![\d:])")


@dataclass
class Roles:
    config: SvbBuildConfig
    llm: LLMClient
    store: RoleStore
    exemplars: dict[str, list[dict[str, str]]]
    calls: asyncio.Semaphore

    def prompt(self, prompt_id: str) -> Prompt:
        return recipe_prompts.load(prompt_id, self.config.prompts)

    async def ask(
        self,
        prompt_id: str,
        values: dict[str, str],
        parse: Any,
        *,
        images: Sequence[ContentPart] = (),
        phase: str,
    ) -> Drafted[Any]:
        prompt = self.prompt(prompt_id)
        system, user = prompt.fill(**values)
        messages = [Message(role="system", content=[TextPart(text=system)])] if system else []
        messages.append(Message(role="user", content=[*images, TextPart(text=user)]))
        async with self.calls:
            return await self.llm.ask(
                messages,
                parse,
                prompt_id=prompt_id,
                prompt_sha256=prompt.sha256,
                stage=prompt_id,
                phase=phase,
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

    # -- QA generator ------------------------------------------------------------------------------

    async def generate(self, experiment: Experiment) -> RoleOutput:
        fingerprint = self.config.fingerprint(
            "generate",
            experiment.stamp(),
            self.prompt_hashes("svb_analysis", "svb_generate"),
            self.exemplars,
            self.llm.model,
            *self.redo_epoch("svb_generate"),
        )

        async def compute(output: RoleOutput) -> None:
            base = {
                "title": experiment.source.title,
                "discipline": experiment.source.discipline,
                "transcript": experiment.transcript_lines(),
                "paper": self.paper(experiment),
            }
            try:
                analysis = await self.ask("svb_analysis", base, json_parser(Analysis), phase="svb_generate")
                generated = await self.ask(
                    "svb_generate",
                    {
                        "counts": _counts(self.config.per_type),
                        "exemplars": _exemplars(self.exemplars, self.config.per_type),
                        "analysis": json.dumps(analysis.value.model_dump(), ensure_ascii=False, indent=1),
                        "transcript": base["transcript"],
                        "paper": base["paper"],
                    },
                    json_parser(Generated, lambda g: _check_generated(g, self.config.per_type)),
                    phase="svb_generate",
                )
            except DraftFailure as failure:
                output.problem(f"QA generator: {failure}", transient=failure.transient)
                return
            output.value = analysis.value.model_dump()
            provenance = [analysis.provenance(), generated.provenance()]
            for question in generated.value.questions:
                if question.type == "quantitative":
                    assert question.value is not None
                    decimals = (
                        question.decimals if question.decimals is not None else _decimals(question.value)
                    )
                    key_seed = f"{experiment.video_id}:{question.question}"
                    values = gaussian_distractors(
                        question.value, decimals, relative_sigma=self.config.noise, seed=key_seed
                    )
                    draft = new_draft(
                        experiment.video_id,
                        "quantitative",
                        question.question,
                        number_text(question.value, decimals, question.unit),
                        [number_text(v, decimals, question.unit) for v in values],
                        quantity={
                            "value": question.value,
                            "unit": question.unit,
                            "decimals": decimals,
                            "noise_relative_sigma": self.config.noise,
                        },
                    )
                else:
                    assert question.answer is not None and question.distractors is not None
                    draft = new_draft(
                        experiment.video_id,
                        question.type,
                        question.question,
                        question.answer.strip(),
                        list(question.distractors),
                    )
                draft.evidence = [span.model_dump() for span in question.evidence]
                draft.drafts = [{**p, "role": "qa_generator"} for p in provenance]
                output.drafts.append(draft)

        return await self.store.run(experiment.video_id, "generate", fingerprint, compute)

    # -- evaluator, comparer, refiner (per draft) ---------------------------------------------------

    async def verify(self, experiment: Experiment, generated: RoleOutput) -> RoleOutput:
        """Evaluator -> visual comparer -> refiner over every generated draft (one saved stage each)."""
        evaluated = await self._per_draft(experiment, generated, "evaluate", self._evaluate)
        compared = await self._per_draft(experiment, evaluated, "compare", self._compare)
        return await self._per_draft(experiment, compared, "refine", self._refine)

    async def _per_draft(
        self, experiment: Experiment, previous: RoleOutput, role: str, step: Any
    ) -> RoleOutput:
        prompt_id = f"svb_{role}"
        fingerprint = self.config.fingerprint(
            role,
            previous.fingerprint,
            self.prompt_hashes(prompt_id),
            self.llm.model,
            *self.redo_epoch(prompt_id),
        )

        async def compute(output: RoleOutput) -> None:
            for task, reasons in previous.dropped.items():
                for reason, count in reasons.items():
                    output.dropped.setdefault(task, {})[reason] = count
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
        options, letter = draft.options()
        frames = await experiment.frames(self.config.frames, self.config.frame_max_side)
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
                json_parser(Evaluation, lambda e: _check_evaluation(e, options)),
                images=frames,
                phase="svb_evaluate",
            )
        except DraftFailure as failure:
            return None, "", failure
        evaluation = reply.value
        kept = draft.model_copy(deep=True)
        kept.evaluation = {**evaluation.model_dump(), "correct_letter": letter}
        kept.drafts.append({**reply.provenance(), "role": "evaluator"})
        if not evaluation.answerable:
            return None, "evaluator: unanswerable", None
        if evaluation.answer != letter:
            return None, "evaluator: chose another option", None
        return kept, "", None

    async def _compare(
        self, experiment: Experiment, draft: SvbDraft
    ) -> tuple[SvbDraft | None, str, DraftFailure | None]:
        frames = await experiment.frames(self.config.frames, self.config.frame_max_side)
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
                json_parser(Comparison, lambda c: _check_comparison(c, duration)),
                images=frames,
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
                json_parser(Refined, lambda r: _check_refined(r, draft, experiment.duration)),
                phase="svb_refine",
            )
        except DraftFailure as failure:
            return None, "", failure
        kept = draft.model_copy(deep=True)
        kept.question = reply.value.question
        if not quantitative and reply.value.distractors:
            kept.distractors = list(reply.value.distractors)
        kept.drafts.append({**reply.provenance(), "role": "refiner"})
        return kept, "", None


def _counts(per_type: dict[str, int]) -> str:
    return ", ".join(f"{n} {t}" for t, n in per_type.items() if n)


def _exemplars(exemplars: dict[str, list[dict[str, str]]], per_type: dict[str, int]) -> str:
    lines = []
    for task, count in per_type.items():
        if not count:
            continue
        lines.append(f"{QUESTION_TYPES[task]}:")
        for example in exemplars.get(task, []):
            lines.append(f"- Q: {example['question']}\n  A: {example['answer']}")
    return "\n".join(lines)


def _decimals(value: float) -> int:
    text = f"{value:.6f}".rstrip("0")
    return max(0, len(text.split(".")[1])) if "." in text else 0


def _check_generated(generated: Generated, per_type: dict[str, int]) -> Generated:
    problems = []
    kept = []
    for task, wanted in per_type.items():
        questions = [q for q in generated.questions if q.type == task]
        if len(questions) < wanted:
            problems.append(f"{wanted} {task} question(s) were asked for, the reply has {len(questions)}")
        kept += questions[:wanted]
    for q in kept:
        if q.type == "quantitative":
            if q.value is None:
                problems.append(f"quantitative question {q.question[:60]!r} needs a numeric 'value'")
            continue
        if not q.answer or not q.answer.strip():
            problems.append(f"{q.type} question {q.question[:60]!r} has no 'answer'")
            continue
        texts = [norm_text(d) for d in q.distractors or []]
        if len(texts) != N_OPTIONS - 1 or len(set(texts)) != len(texts):
            problems.append(
                f"{q.type} question {q.question[:60]!r} needs exactly {N_OPTIONS - 1} different distractors, got {len(set(texts))}"
            )
        elif norm_text(q.answer) in texts:
            problems.append(f"a distractor of {q.question[:60]!r} is the answer itself")
    if problems:
        raise InvalidReply("; ".join(problems))
    return Generated(questions=kept)


def _options_text(options: dict[str, str]) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())


def _check_evaluation(evaluation: Evaluation, options: dict[str, str]) -> Evaluation:
    if evaluation.answerable and evaluation.answer not in options:
        raise InvalidReply(
            f"'answer' must be one of the letters {', '.join(options)} when answerable is true"
        )
    return evaluation


def _check_comparison(comparison: Comparison, duration: float) -> Comparison:
    for cue in comparison.cues:
        for value in (cue.start, cue.end):
            if value is None:
                continue
            seconds = clock_seconds(value)
            if seconds > duration + 1:
                raise InvalidReply(
                    f"cue {cue.cue!r}: time {value} is after the end of the video ({duration:.0f} s)"
                )
        if cue.visible and cue.start is None:
            raise InvalidReply(f"visible cue {cue.cue!r} needs its time in the video ('start', mm:ss)")
    return comparison


def question_times(question: str) -> list[float]:
    return [int(m.group(1)) * 60 + int(m.group(2)) for m in _TIME.finditer(question)]


def _check_refined(refined: Refined, draft: SvbDraft, duration: float) -> Refined:
    times = question_times(refined.question)
    if not times:
        raise InvalidReply(
            "the question must refer to the video segment(s) it needs, written as 'at mm:ss-mm:ss'"
        )
    late = [t for t in times if t > duration + 1]
    if late:
        raise InvalidReply(
            f"the question refers to {late[0]:.0f} s, after the end of the video ({duration:.0f} s)"
        )
    if draft.task != "quantitative":
        texts = [norm_text(d) for d in refined.distractors or []]
        if len(texts) != N_OPTIONS - 1 or len(set(texts)) != len(texts):
            raise InvalidReply(f"give exactly {N_OPTIONS - 1} different distractors")
        if norm_text(draft.answer) in texts:
            raise InvalidReply("a distractor is the correct answer itself")
    if len(draft.answer) >= 4 and norm_text(draft.answer) in norm_text(refined.question):
        raise InvalidReply("the rewritten question gives the answer away")
    return refined


def load_exemplars(path: Path | None) -> dict[str, list[dict[str, str]]]:
    """The exemplar set: `path` (a replacement) or the bundled `exemplars.json`; checked."""
    from importlib.resources import files

    from expvid.schema import DataError

    where = str(path) if path else "exemplars.json (bundled)"
    try:
        text = (
            path.read_text(encoding="utf-8")
            if path
            else files(__package__).joinpath("exemplars.json").read_text(encoding="utf-8")
        )
        data = json.loads(text)
    except (OSError, ValueError) as error:
        raise DataError(f"{where}: cannot read the exemplars ({error})") from None
    result: dict[str, list[dict[str, str]]] = {}
    for task in QUESTION_TYPES:
        entries = data.get(task) if isinstance(data, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("question"), str) and isinstance(e.get("answer"), str)
            for e in entries
        ):
            raise DataError(f"{where}: '{task}' must be a list of {{question, answer}} objects")
        result[task] = [{"question": e["question"], "answer": e["answer"]} for e in entries]
    return result
