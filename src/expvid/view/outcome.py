"""What happened to one item in one run, in the words a researcher filters by.

The outcome is read from the run's own records, never recomputed into something else: a failed
request stays "failed" (with its kind), an answer extraction could not read stays "unparseable",
and a judge that failed stays "judge-failed" even though the scorer counts it as 0. A prediction
written after the last scoring pass (a retried failure, a run still going) is "unscored" rather
than shown with a stale score. Truncation (the token limit cut the answer) and refusal are flags
on top of the outcome: a truncated answer can still be right or wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from expvid.schema import ExtractionStatus, ItemScore, Prediction


class Outcome(StrEnum):
    CORRECT = "correct"
    PARTIAL = "partial"  # some blanks (or some credit) earned, not all
    WRONG = "wrong"
    UNPARSEABLE = "unparseable"
    FAILED = "failed"  # no answer: the request or the media failed
    JUDGE_FAILED = "judge-failed"
    UNSCORED = "unscored"  # answered, not scored yet (or scored before this answer was redone)
    PENDING = "pending"  # selected for the run, no answer yet
    ABSENT = "absent"  # not part of this run (another run being compared has it)


#: Outcomes "next failure" stops at: everything that cost the model points or was never scored right.
FAILURES = frozenset(
    {Outcome.PARTIAL, Outcome.WRONG, Outcome.UNPARSEABLE, Outcome.FAILED, Outcome.JUDGE_FAILED}
)


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    why: str
    truncated: bool = False
    refusal: bool = False
    error_kind: str | None = None

    @property
    def is_failure(self) -> bool:
        return self.outcome in FAILURES or self.truncated


def classify(
    prediction: Prediction | None, score: ItemScore | None, *, scored_at: float | None, selected: bool = True
) -> Verdict:
    """The outcome of one (item, sample) from its latest prediction and its item score, if any.

    `selected`: the run's settings (tasks, limit) include the item, so a missing answer is pending.
    """
    truncated = prediction.truncated if prediction is not None else False
    refusal = bool(prediction is not None and prediction.refusal)
    if prediction is not None and not prediction.ok:
        kind = prediction.error_kind.value if prediction.error_kind is not None else None
        reason = prediction.error or "no response"
        return Verdict(
            Outcome.FAILED,
            f"{kind or 'error'}: {reason}",
            error_kind=kind,
            truncated=truncated,
            refusal=refusal,
        )
    if score is None:
        if prediction is None:
            if not selected:
                return Verdict(Outcome.ABSENT, "not part of this run")
            return Verdict(Outcome.PENDING, "no prediction yet")
        return Verdict(
            Outcome.UNSCORED,
            "answered; not scored yet (run `expvid score RUN`)",
            truncated=truncated,
            refusal=refusal,
        )
    if prediction is not None and _answered_after(prediction, scored_at):
        return Verdict(
            Outcome.UNSCORED,
            "answered again after the last scoring pass (run `expvid score RUN`)",
            truncated=truncated,
            refusal=refusal,
        )
    if score.status is ExtractionStatus.FAILED:
        if prediction is not None:  # the scored answer failed; this one did not: the score is stale
            return Verdict(
                Outcome.UNSCORED,
                "the score is of an earlier, failed attempt",
                truncated=truncated,
                refusal=refusal,
            )
        return Verdict(Outcome.FAILED, "scored as failed (no response)", truncated=truncated, refusal=refusal)
    if score.judge_error:
        return Verdict(
            Outcome.JUDGE_FAILED, f"judge failed: {score.judge_error}", truncated=truncated, refusal=refusal
        )
    if score.status is ExtractionStatus.UNPARSEABLE:
        return Verdict(
            Outcome.UNPARSEABLE,
            "no answer of the right type could be read",
            truncated=truncated,
            refusal=refusal,
        )
    earned, possible = score.earned, score.possible
    if possible > 0 and earned >= possible - 1e-9:
        return Verdict(Outcome.CORRECT, f"{earned:g}/{possible:g}", truncated=truncated, refusal=refusal)
    if earned > 1e-9:
        return Verdict(Outcome.PARTIAL, f"{earned:g}/{possible:g}", truncated=truncated, refusal=refusal)
    return Verdict(Outcome.WRONG, f"{earned:g}/{possible:g}", truncated=truncated, refusal=refusal)


def _answered_after(prediction: Prediction, scored_at: float | None) -> bool:
    if scored_at is None:
        return False
    # One second of slack: file systems with coarse timestamps, and scoring right after answering.
    return prediction.created_at.timestamp() > scored_at + 1.0
