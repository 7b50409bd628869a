"""What each role's reply must meet beyond its JSON shape; a reply that breaks a rule is re-asked
with every problem named (`InvalidReply`), so a model can fix it.

- QA generator: the counts asked per type; text options pass `option_checks` (nine, no twins by the
  validity audit's near-duplicate check, with the build's one embedding table);
  a quantitative value is shown exactly by its decimals (2.5 with 0 decimals would be shown "2" or
  "3": neither is the answer); evidence and analysis spans run forwards inside the video;
- evaluator: a letter among the options when answerable;
- visual comparer: every cue's span runs forwards inside the video, a visible cue has a time;
- refiner: the question names its segments, every range forwards and inside the video, the answer
  not written into it; rewritten text options pass `option_checks` again.
"""

from __future__ import annotations

from expvid.construction.llm import InvalidReply
from expvid.construction.recipes.scivideobench.numeric_options import display_units, value_decimals
from expvid.construction.recipes.scivideobench.option_checks import TwinCheck, option_key, option_problems
from expvid.construction.recipes.scivideobench.schemas import (
    Analysis,
    Comparison,
    Evaluation,
    Generated,
    Refined,
)
from expvid.construction.recipes.scivideobench.times import (
    question_time_problems,
    question_times,
    span_problem,
)


def _raise(problems: list[str]) -> None:
    if problems:
        raise InvalidReply("; ".join(dict.fromkeys(problems)))


def check_analysis(analysis: Analysis, duration: float) -> Analysis:
    problems = []
    for operation in analysis.operations:
        problem = span_problem(
            operation.start, operation.end, duration, f"operation {operation.description[:50]!r}"
        )
        if problem:
            problems.append(problem)
    for number in analysis.numbers:
        problem = span_problem(number.time, None, duration, f"number {number.quantity[:50]!r}")
        if problem:
            problems.append(problem)
    _raise(problems)
    return analysis


def check_generated(
    generated: Generated, per_type: dict[str, int], duration: float, twins: TwinCheck | None = None
) -> Generated:
    problems = []
    kept = []
    for task, wanted in per_type.items():
        questions = [q for q in generated.questions if q.type == task]
        if len(questions) < wanted:
            problems.append(f"{wanted} {task} question(s) were asked for, the reply has {len(questions)}")
        kept += questions[:wanted]
    for q in kept:
        where = f"{q.type} question {q.question[:60]!r}"
        problems += [f"{where}: {p}" for p in question_time_problems(q.question, duration)]
        for span in q.evidence:
            problem = span_problem(span.start, span.end, duration, f"{where}: evidence")
            if problem:
                problems.append(problem)
        if q.type == "quantitative":
            if q.value is None:
                problems.append(f"{where} needs a numeric 'value'")
                continue
            decimals = q.decimals if q.decimals is not None else value_decimals(q.value)
            try:
                display_units(q.value, decimals)
            except ValueError as error:
                problems.append(f"{where}: {error}")
            continue
        if not q.answer or not option_key(q.answer):
            problems.append(f"{where} has no 'answer'")
            continue
        problems += [f"{where}: {p}" for p in option_problems(q.answer, list(q.distractors or []), twins)]
    _raise(problems)
    return Generated(questions=kept)


def check_evaluation(evaluation: Evaluation, options: dict[str, str]) -> Evaluation:
    if evaluation.answerable and evaluation.answer not in options:
        raise InvalidReply(
            f"'answer' must be one of the letters {', '.join(options)} when answerable is true"
        )
    return evaluation


def check_comparison(comparison: Comparison, duration: float) -> Comparison:
    problems = []
    for cue in comparison.cues:
        problem = span_problem(cue.start, cue.end, duration, f"cue {cue.cue!r}")
        if problem:
            problems.append(problem)
        if cue.visible and cue.start is None:
            problems.append(f"visible cue {cue.cue!r} needs its time in the video ('start', mm:ss)")
    _raise(problems)
    return comparison


def check_refined(
    refined: Refined, answer: str, quantitative: bool, duration: float, twins: TwinCheck | None = None
) -> Refined:
    problems = []
    if not question_times(refined.question):
        problems.append(
            "the question must refer to the video segment(s) it needs, written as 'at mm:ss-mm:ss'"
        )
    problems += question_time_problems(refined.question, duration)
    if not quantitative:
        problems += option_problems(answer, list(refined.distractors or []), twins)
    if len(option_key(answer)) >= 4 and option_key(answer) in option_key(refined.question):
        problems.append("the rewritten question gives the answer away")
    _raise(problems)
    return refined
