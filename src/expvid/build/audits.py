"""Vision-centric audits of drafted items (ExpVid 3.3: items must not be answerable without the video).

- Blind answerability: each item is asked, WITHOUT the video, with the evaluation prompt of appendix F.4
  (`expvid.suites.expvid_prompts.build_prompt`, the text `expvid eval` sends) to a text-only model,
  `samples` times (seeds 0..n-1, temperature 1 by default, so the samples differ and each is cached).
  Replies are read with the evaluator's own extraction and scored with its metric (letters and step
  numbers exact, Jaccard for sequences, the offline blank judge for blanks); an unreadable reply scores
  0. An item is flagged `blind_answerable` when its mean blind score exceeds chance by `margin`.
  Chance: 1/options for MCQs, 1/steps for step prediction, |answer|/steps for sequence generation
  (what answering "all steps" scores), 0 for blanks.
- ASR leakage: for MCQs with text options, the MiniLM embedding of the narration (`asr_caption`) is
  compared with each option; the item is flagged `asr_leakage` when the correct option is the most
  similar one (the narration alone would point at the answer).
- Answer in the question: the correct option's text written in the question (`answer_in_question`).
- Option length: the correct option is the unique longest and at least 1.25x the next (`length_bias`).
- Position balance and option-length bias per task go into the report (letter counts, a chi-square
  test against uniform for the four-option tasks, how often the correct option is the longest).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from expvid.build.context import BuildContext
from expvid.build.llm import DraftFailure
from expvid.build.schemas import norm_text
from expvid.models.types import Message, TextPart
from expvid.schema import AnswerType, Item
from expvid.scoring import extract_answer
from expvid.scoring.metrics import jaccard
from expvid.suites.expvid_eval import step_numbers_in
from expvid.suites.expvid_prompts import build_prompt

LENGTH_RATIO = 1.25
BLIND_STAGE = "blind_audit"
BLIND_PROMPT_ID = "expvid_f4_eval_prompt"


@dataclass
class AuditResult:
    flags: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # item id -> flags
    blind: dict[str, dict[str, Any]] = field(default_factory=dict)  # item id -> scores
    notes: list[str] = field(default_factory=list)

    def flag(self, item_id: str, kind: str, detail: str, score: float | None = None) -> None:
        entry: dict[str, Any] = {"kind": kind, "detail": detail}
        if score is not None:
            entry["score"] = round(score, 4)
        self.flags.setdefault(item_id, []).append(entry)


def chance_level(item: Item) -> float:
    if item.answer_type is AnswerType.CHOICE:
        return 1.0 / len(item.options or {"A": ""})
    steps = step_numbers_in(item.question)
    if item.answer_type is AnswerType.STEP_NUMBER:
        return 1.0 / max(1, len(steps))
    if item.answer_type is AnswerType.STEP_SEQUENCE:
        return len(item.answer) / max(1, len(steps))  # type: ignore[arg-type]
    return 0.0


async def blind_audit(context: BuildContext, items: list[Item], result: AuditResult) -> None:
    client = context.blind
    samples = context.config.blind_samples
    if client is None or samples == 0:
        result.notes.append("blind audit off")
        return
    from expvid.scoring.judges.offline_blank import OfflineBlankJudge

    judge = OfflineBlankJudge() if any(i.answer_type is AnswerType.BLANKS for i in items) else None

    async def ask(item: Item, seed: int) -> str | None:
        messages = [Message(role="user", content=[TextPart(text=build_prompt(item))])]
        try:
            async with context.calls:
                drafted = await client.ask(
                    messages,
                    lambda text: text,
                    prompt_id=BLIND_PROMPT_ID,
                    prompt_sha256="",
                    stage=BLIND_STAGE,
                    seed=seed,
                    temperature=context.config.blind_temperature,
                )
        except DraftFailure as failure:
            result.notes.append(f"{item.id}: blind sample {seed} failed: {failure.message}")
            return None
        return drafted.value

    replies = await asyncio.gather(*(ask(item, seed) for item in items for seed in range(samples)))
    for index, item in enumerate(items):
        answers = replies[index * samples : (index + 1) * samples]
        scores = await asyncio.to_thread(_score_blind, item, [a for a in answers if a is not None], judge)
        if not scores:
            continue
        mean = sum(scores) / len(scores)
        chance = chance_level(item)
        result.blind[item.id] = {"scores": scores, "mean": mean, "chance": chance}
        if mean > chance + context.config.blind_margin:
            result.flag(
                item.id,
                "blind_answerable",
                f"a text-only model scored {mean:.2f} without the video over {len(scores)} sample(s) "
                f"(chance {chance:.2f})",
                mean,
            )


def _score_blind(item: Item, replies: list[str], judge: Any) -> list[float]:
    scores: list[float] = []
    for reply in replies:
        extraction = extract_answer(reply, item)
        if not extraction.ok:
            scores.append(0.0)
        elif item.answer_type in (AnswerType.CHOICE, AnswerType.STEP_NUMBER):
            scores.append(float(extraction.value == item.answer))
        elif item.answer_type is AnswerType.STEP_SEQUENCE:
            scores.append(jaccard(extraction.value, item.answer))  # type: ignore[arg-type]
        else:
            gold = list(item.answer)  # type: ignore[arg-type]
            predicted = list(extraction.value)
            pairs = [(g, predicted[i] if i < len(predicted) else "") for i, g in enumerate(gold)]
            decisions = judge.decide_many(pairs) if judge is not None else []
            scores.append(sum(d.verdict for d in decisions) / max(1, len(gold)))
    return scores


def _text_options(item: Item) -> bool:
    return bool(item.options) and not all(text.strip().isdigit() for text in (item.options or {}).values())


def asr_leakage(items: list[Item], result: AuditResult, embedder: Any) -> None:
    """Flag MCQs whose correct option is the one most similar to the narration (MiniLM cosine)."""
    candidates = [
        i
        for i in items
        if i.answer_type is AnswerType.CHOICE and _text_options(i) and (i.context or "").strip()
    ]
    pairs = [(i.context or "", text) for i in candidates for text in (i.options or {}).values()]
    similarities = embedder.similarity(pairs) if pairs else []
    cursor = 0
    for item in candidates:
        letters = list(item.options or {})
        values = similarities[cursor : cursor + len(letters)]
        cursor += len(letters)
        ranked = sorted(zip(values, letters, strict=True), reverse=True)
        best_value, best_letter = ranked[0]
        if best_letter == item.answer:
            runner_up = ranked[1][0]
            result.flag(
                item.id,
                "asr_leakage",
                f"the correct option is the one most similar to the narration (cosine {best_value:.2f}, "
                f"next {runner_up:.2f})",
                best_value,
            )


def text_checks(items: list[Item], result: AuditResult) -> None:
    """Answer written in the question; correct option much longer than every other."""
    for item in items:
        if item.answer_type is not AnswerType.CHOICE or not _text_options(item):
            continue
        options = item.options or {}
        correct = options[str(item.answer)]
        if len(correct.strip()) >= 4 and norm_text(correct) in norm_text(item.question):
            result.flag(
                item.id, "answer_in_question", f'the correct option "{correct}" is written in the question'
            )
        lengths = sorted(((len(text), letter) for letter, text in options.items()), reverse=True)
        (longest, letter), (second, _) = lengths[0], lengths[1]
        if letter == item.answer and longest >= LENGTH_RATIO * max(1, second):
            result.flag(
                item.id,
                "length_bias",
                f"the correct option is the longest ({longest} characters; next {second})",
                longest / max(1, second),
            )


def chi_square_p(counts: list[int]) -> float:
    """p-value of a chi-square goodness-of-fit test against equal counts (closed forms of the survival
    function for integer degrees of freedom)."""
    total = sum(counts)
    k = len(counts)
    if total == 0 or k < 2:
        return 1.0
    expected = total / k
    x = sum((c - expected) ** 2 / expected for c in counts)
    dof = k - 1
    half = x / 2
    if dof % 2 == 0:
        return min(1.0, math.exp(-half) * sum(half**i / math.factorial(i) for i in range(dof // 2)))
    p = math.erfc(math.sqrt(half))
    for i in range(1, (dof - 1) // 2 + 1):
        p += math.exp(-half + (i - 0.5) * math.log(half) - math.lgamma(i + 0.5)) if half > 0 else 0.0
    return min(1.0, p)


def balance_report(items: list[Item]) -> dict[str, dict[str, Any]]:
    """Per choice task: answer letter counts (and chi-square p for fixed option counts), and how often
    the correct option is the (unique) longest, against the chance of that."""
    by_task: dict[str, list[Item]] = {}
    for item in items:
        if item.answer_type is AnswerType.CHOICE:
            by_task.setdefault(item.task, []).append(item)
    report: dict[str, dict[str, Any]] = {}
    for task, task_items in sorted(by_task.items()):
        letters = Counter(str(i.answer) for i in task_items)
        sizes = {len(i.options or {}) for i in task_items}
        entry: dict[str, Any] = {"n": len(task_items), "answer_letters": dict(sorted(letters.items()))}
        if len(sizes) == 1:
            n_options = sizes.pop()
            counts = [letters.get(chr(ord("A") + k), 0) for k in range(n_options)]
            entry["chi_square_p"] = round(chi_square_p(counts), 4)
        else:
            entry["relative_position_mean"] = round(
                sum(
                    list(i.options or {}).index(str(i.answer)) / max(1, len(i.options or {}) - 1)
                    for i in task_items
                )
                / len(task_items),
                3,
            )
            entry["last_option_share"] = round(
                sum(list(i.options or {})[-1] == i.answer for i in task_items) / len(task_items), 3
            )
        if all(_text_options(i) for i in task_items):
            longest = 0
            ratios = []
            for item in task_items:
                options = item.options or {}
                correct = len(options[str(item.answer)])
                others = [len(t) for letter, t in options.items() if letter != item.answer]
                longest += correct > max(others)
                ratios.append(correct / max(1.0, sum(others) / len(others)))
            entry["correct_is_longest"] = round(longest / len(task_items), 3)
            entry["chance_longest"] = round(
                sum(1 / len(i.options or {"A": ""}) for i in task_items) / len(task_items), 3
            )
            entry["mean_length_ratio"] = round(sum(ratios) / len(ratios), 3)
        report[task] = entry
    return report


def position_flags(items: list[Item], balance: dict[str, dict[str, Any]], result: AuditResult) -> None:
    """When a four-option task's letters are unbalanced (p < 0.05), flag items on over-used letters."""
    for task, entry in balance.items():
        p = entry.get("chi_square_p")
        if p is None or p >= 0.05:
            continue
        counts: dict[str, int] = entry["answer_letters"]
        expected = entry["n"] / max(1, len(counts))
        for item in items:
            if item.task == task and counts.get(str(item.answer), 0) > expected:
                result.flag(
                    item.id,
                    "position_bias",
                    f"{task} answers are unbalanced across letters (chi-square p={p:.3f}); "
                    f"{item.answer} is over-used ({counts[str(item.answer)]} of {entry['n']})",
                )
