"""Verification by two annotators and an adjudicator, in the release's shape (section 3.3, B.3).

Shapes (as `examples.json` stores them):
- a judgement: `{"question": bool, "answers": [bool per machine answer], "comment": [texts]}`;
  an annotator who finds the question invalid judges nothing else (`answers` and `comment` empty),
  as the official interface hides the answers then. `comment` holds the answers the annotator wrote;
- `verification`: `{"question", "answers" (the machine answers), "judges": [judgement, judgement]}`;
- `adjudication`: `{"question", "answers", "answer_tags", "init", "judge"?}`: every machine answer
  and every written answer (duplicates kept, as the paper says), shuffled so their sources do not
  show, tagged "machine" / "human"; `init` is what the two judgements settle by majority; `judge`
  (present only when the adjudicator was needed) is the adjudicator's judgement over the same list;
- the final fields: `question`, `question_approved_by`, `answers`, `answer_tags` ("machine",
  "annotator", "adjudicator"), `answer_approved_by` ("annotator" or "adjudicator").

Table 14's rules: two agreeing judgements decide (the question, each machine answer); written
answers are always the adjudicator's call; a conflict on the question or on a machine answer goes
to the adjudicator, who may write answers only when one annotator rejected the question (that
example had one chance of written answers instead of two). `tests/construction_promqa` derives
`init` from `verification` and the final fields from `adjudication` for all 401 released records.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

MACHINE = "machine"
HUMAN = "human"


class Judgement(BaseModel):
    """One person's judgement of one example."""

    model_config = ConfigDict(frozen=True)

    question: bool
    answers: list[bool] = Field(default_factory=list)
    comment: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _invalid_question_judges_nothing_else(self) -> Judgement:
        if not self.question and (self.answers or self.comment):
            raise ValueError("a judgement that rejects the question judges no answer and writes none")
        if any(not text.strip() for text in self.comment):
            raise ValueError("a written answer is empty")
        return self

    def release(self) -> dict[str, Any]:
        return {"question": self.question, "answers": list(self.answers), "comment": list(self.comment)}


class VerificationError(ValueError):
    """Judgements that do not fit the example (named in the message)."""


def check_judgement(judgement: Judgement, n_answers: int) -> None:
    if judgement.question and len(judgement.answers) != n_answers:
        raise VerificationError(
            f"a judgement that accepts the question judges each of the {n_answers} answer(s), "
            f"got {len(judgement.answers)}"
        )


def verification_record(question: str, answers: Sequence[str], judges: Sequence[Judgement]) -> dict[str, Any]:
    if len(judges) != 2:
        raise VerificationError(f"verification needs two judgements, got {len(judges)}")
    for judge in judges:
        check_judgement(judge, len(answers))
    return {"question": question, "answers": list(answers), "judges": [j.release() for j in judges]}


def _majority(a: bool | None, b: bool | None) -> bool | None:
    return a if a is not None and a == b else None


def initial_adjudication(verification: Mapping[str, Any], *, key: str) -> dict[str, Any]:
    """The adjudication record before the adjudicator: the pooled answers, shuffled, and `init`."""
    judges = [Judgement.model_validate(j) for j in verification["judges"]]
    machine = list(verification["answers"])
    for judge in judges:
        check_judgement(judge, len(machine))
    first, second = judges
    question = _majority(first.question, second.question)
    pool: list[tuple[str, str, bool | None]] = []
    for index, text in enumerate(machine):
        votes = [j.answers[index] if j.question else None for j in judges]
        pool.append((text, MACHINE, _majority(votes[0], votes[1])))
    for judge in judges:
        pool += [(text, HUMAN, None) for text in judge.comment]
    random.Random(f"promqa-adjudication:{key}").shuffle(pool)
    return {
        "question": verification["question"],
        "answers": [text for text, _, _ in pool],
        "answer_tags": [tag for _, tag, _ in pool],
        "init": {"question": question, "answers": [value for _, _, value in pool]},
    }


def needs_adjudication(adjudication: Mapping[str, Any]) -> bool:
    """Table 14: a conflict, or a written answer; never when both annotators reject the question."""
    init = adjudication["init"]
    if init["question"] is False:
        return False
    return init["question"] is None or any(value is None for value in init["answers"])


def adjudicator_may_write(adjudication: Mapping[str, Any]) -> bool:
    """Table 14, fifth case: one annotator rejected the question, so answers had one chance only."""
    return adjudication["init"]["question"] is None


def both_rejected(adjudication: Mapping[str, Any]) -> bool:
    return adjudication["init"]["question"] is False


@dataclass(frozen=True)
class Settled:
    """The outcome of an example: approved with its final fields, or rejected (and why)."""

    approved: bool
    reason: str
    fields: dict[str, Any]


def settle(adjudication: Mapping[str, Any]) -> Settled:
    """The final fields from an adjudication record (with `judge` when it needed one)."""
    init = adjudication["init"]
    judge = adjudication.get("judge")
    if needs_adjudication(adjudication) and judge is None:
        raise VerificationError("this example needs the adjudicator's judgement")
    judged = Judgement.model_validate(judge) if judge is not None else None
    question = init["question"] if init["question"] is not None else judged.question  # type: ignore[union-attr]
    if not question:
        who = "both annotators" if init["question"] is False else "the adjudicator"
        return Settled(False, f"question rejected by {who}", {})
    answers, tags, approved_by = [], [], []
    for index, (text, tag, value) in enumerate(
        zip(adjudication["answers"], adjudication["answer_tags"], init["answers"], strict=True)
    ):
        by = "annotator"
        if value is None:
            assert judged is not None
            if len(judged.answers) != len(adjudication["answers"]):
                raise VerificationError(
                    f"the adjudicator judges each of the {len(adjudication['answers'])} answer(s), "
                    f"got {len(judged.answers)}"
                )
            value, by = judged.answers[index], "adjudicator"
        if value:
            answers.append(text)
            tags.append(MACHINE if tag == MACHINE else "annotator")
            approved_by.append(by)
    if judged is not None and judged.comment:
        if not adjudicator_may_write(adjudication):
            raise VerificationError(
                "the adjudicator writes answers only when one annotator rejected the question"
            )
        for text in judged.comment:
            answers.append(text)
            tags.append("adjudicator")
            approved_by.append("adjudicator")
    if not answers:
        return Settled(False, "no answer was judged correct", {})
    fields = {
        "question": adjudication["question"],
        "question_approved_by": "annotator" if init["question"] is not None else "adjudicator",
        "answers": answers,
        "answer_tags": tags,
        "answer_approved_by": approved_by,
    }
    return Settled(True, "approved", fields)


def adjudicator_judgement(
    adjudication: Mapping[str, Any],
    *,
    question: bool | None,
    answers: Mapping[int, bool],
    comment: Sequence[str],
) -> Judgement:
    """The adjudicator's `judge` over the pooled list: their calls where `init` is open, `init` elsewhere.

    `question` is needed only when the annotators disagreed on it; `answers` maps positions of the
    pooled list to the adjudicator's call and must cover every open position (when the question
    stands). Raises `VerificationError` naming what is missing.
    """
    init = adjudication["init"]
    final_question = init["question"] if init["question"] is not None else question
    if final_question is None:
        raise VerificationError("the annotators disagree on the question: judge it")
    if not final_question:
        return Judgement(question=False)
    values: list[bool] = []
    open_positions = []
    for index, value in enumerate(init["answers"]):
        if value is None:
            if index not in answers:
                open_positions.append(index + 1)
                continue
            values.append(answers[index])
        else:
            values.append(value)
    if open_positions:
        raise VerificationError(f"judge answer(s) {', '.join(map(str, open_positions))}")
    written = [text.strip() for text in comment if text.strip()]
    if written and not adjudicator_may_write(adjudication):
        raise VerificationError("answers may be written here only when one annotator rejected the question")
    return Judgement(question=True, answers=values, comment=written)


RELEASE_TAIL = ("generation", "adjudication", "verification")
FINAL_KEYS = ("question", "question_approved_by", "answers", "answer_tags", "answer_approved_by")


def release_record(
    candidate: Mapping[str, Any],
    verification: Mapping[str, Any],
    adjudication: Mapping[str, Any],
    final: Mapping[str, Any],
) -> dict[str, Any]:
    """A verified example in the release's key order (example fields, generation, trail, `final`
    fields as `settle` returns them)."""
    record = {k: v for k, v in candidate.items() if k not in (*RELEASE_TAIL, *FINAL_KEYS, "answer_tags")}
    record["generation"] = candidate["generation"]
    record["adjudication"] = dict(adjudication)
    record["verification"] = dict(verification)
    record.update(final)
    return record
