"""Vision-centric audits of drafted items (ExpVid 3.3: items must not be answerable without the video).

Each audit is calibrated on two scripted builds of the sample, one drafted clean and one drafted to
leak in known ways (`tests/construction/test_build_calibration.py`), which reports every audit's hit rate on
both; thresholds below were chosen there and are asserted to still separate the two.

- Blind answerability (`blind_answerable`): each item is asked WITHOUT the video, with the evaluation
  prompt of appendix F.4 (`expvid.suites.expvid_prompts.build_prompt`), `samples` times (seeds 0..n-1,
  temperature 1), read with the evaluator's extraction and scored with its metric; flagged when the
  mean beats chance by `margin`. Chance: 1/options; 1/steps for step prediction; |answer|/steps for
  sequence generation; 0 for blanks.
- Narration leakage (`asr_leakage`): can the item be answered from the narration without the video?
  Every Level-1 answer is narrated by construction (it was extracted from the narration), so "the
  correct option resembles the narration" says nothing. The question is whether the narration reaches
  the model: for a choice item, whether the question as shown repeats words of the clip's narration
  that single out the correct option (the share of the correct option's identifying words among them,
  minus the best distractor's share, at least `ASR_LEAK_MARGIN`); for a blank item, whether an answer
  is spoken verbatim in the narration of its video (Level-3 videos keep their sound, and the
  `-S with_asr=true` ablation shows the narration).
- Answer in the question (`answer_in_question`): the validity audit's own check
  (`expvid.audit.checks.check_answer_in_question`, one implementation for the build and `expvid
  audit`): the correct option written in the question (normal form: case, punctuation, plural) and
  no other option; for blanks, an answer in the question AS SHOWN (the `Title:` and `Discipline:`
  lines included). The build's other audits have no counterpart in `expvid audit`, or answer another
  question: `length_bias` and `position_bias` flag single items for reviewers where the audit's
  longest-option and letter-prior solvers test a whole task against chance; `ordering_shortcut` runs
  the audit's ordering solvers (`expvid.ordering.solvers`) on each item; `asr_leakage` asks whether the
  question AS SHOWN repeats narration that singles out the answer, which reaches the model in every
  setting, where the audit's transcript overlap reads the narration itself (informational unless
  the setting shows it); blind answerability asks a model.
- Option length (`length_bias`): the correct option is the unique longest and at least 1.25x the next.
- Ordering shortcut (`ordering_shortcut`): a solver that sees only the option set (no video, no step
  text) beats chance on the item: medoid, farthest, centre, most eccentric and most isolated option
  under six distances between orders, Borda, Kemeny, Condorcet, position plurality, shared
  neighbouring pairs, a unique distance profile (`ordering.SOLVERS`); the report gives each solver's
  accuracy over all step-ordering items.
- Implausible distractors (`implausible_distractor`): a distractor made only of everyday words, one
  of which neither its experiment nor enough experiments of its discipline or of the collection use
  (`domain.py`; out-of-domain: "garden hose" for a cell-culture step), reported with
  the blind audit's evidence (how often the text-only model chose it). MiniLM similarity to the domain
  was tried first and does not separate these on the calibration set ("garden hose" scores as close
  to "laboratory equipment" as "incubation tray").
- Position balance and option-length bias per task go into the report (letter counts, a chi-square
  test against uniform for the four-option tasks, how often the correct option is the longest).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from expvid.audit.checks import check_answer_in_question
from expvid.audit.result import ItemResult
from expvid.construction.context import BuildContext
from expvid.construction.domain import DomainVocabulary, foreign_words
from expvid.construction.drafts import Problem
from expvid.construction.llm import DraftFailure
from expvid.media.words import contains_phrase, content_lemmas
from expvid.models.types import Message, TextPart
from expvid.ordering.solvers import option_orders, shortcuts, solver_accuracy
from expvid.schema import AnswerType, Item
from expvid.scoring import extract_answer
from expvid.scoring.metrics import jaccard
from expvid.suites.expvid_eval import step_numbers_in
from expvid.suites.expvid_prompts import build_prompt

LENGTH_RATIO = 1.25
BLIND_STAGE = "blind_audit"
BLIND_PROMPT_ID = "expvid_f4_eval_prompt"
#: `asr_leakage` for choice items: the correct option's share of narration words in the question minus
#: the best distractor's. Chosen on the calibration builds: clean items score 0 or below, items whose
#: question quotes the narration score 0.5 to 1; 0.5 separates them.
ASR_LEAK_MARGIN = 0.5
#: Tasks whose options are names or phrases (not numbers, not step lists) for the implausibility test.
PHRASE_TASKS = ("materials", "tools", "operation")


@dataclass
class AuditResult:
    flags: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # item id -> flags
    blind: dict[str, dict[str, Any]] = field(default_factory=dict)  # item id -> scores
    notes: list[str] = field(default_factory=list)
    #: Blind samples that failed: failed units (retried by the next run).
    problems: list[Problem] = field(default_factory=list)
    #: Step ordering: each option-comparing solver's mean expected accuracy (`ordering_shortcuts`).
    ordering_solvers: dict[str, Any] = field(default_factory=dict)

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


def blind_messages(item: Item) -> list[Message]:
    """The blind audit's request: the evaluator's F.4 prompt for the item, without the video."""
    return [Message(role="user", content=[TextPart(text=build_prompt(item))])]


async def blind_audit(context: BuildContext, items: list[Item], result: AuditResult) -> None:
    client = context.blind
    samples = context.config.blind_samples
    if client is None or samples == 0:
        result.notes.append("blind audit off")
        return
    judge = _blank_judge() if any(i.answer_type is AnswerType.BLANKS for i in items) else None
    context.progress.add(BLIND_STAGE, len(items) * samples)

    async def ask(item: Item, seed: int) -> str | None:
        messages = blind_messages(item)
        try:
            async with context.calls:
                with context.clock.running(BLIND_STAGE):
                    drafted = await client.ask(
                        messages,
                        lambda text: text,
                        prompt_id=BLIND_PROMPT_ID,
                        prompt_sha256="",
                        stage=BLIND_STAGE,
                        seed=seed,
                        temperature=context.config.blind_temperature,
                        phase=BLIND_STAGE,
                    )
        except DraftFailure as failure:
            result.problems.append(
                Problem(
                    video_id=str(item.meta.get("video_id") or "") or None,
                    stage=BLIND_STAGE,
                    message=f"{item.id}: blind sample {seed} failed: {failure.message}",
                    transient=failure.transient,
                    failed=True,
                )
            )
            return None
        finally:
            context.progress.advance(BLIND_STAGE)
        return drafted.value

    replies = await asyncio.gather(*(ask(item, seed) for item in items for seed in range(samples)))
    for index, item in enumerate(items):
        answers = [a for a in replies[index * samples : (index + 1) * samples] if a is not None]
        scores = await asyncio.to_thread(_score_blind, item, answers, judge)
        if not scores:
            continue
        mean = sum(scores) / len(scores)
        chance = chance_level(item)
        chosen = [_letter(item, a) for a in answers] if item.answer_type is AnswerType.CHOICE else []
        result.blind[item.id] = {"scores": scores, "mean": mean, "chance": chance, "chosen": chosen}
        if mean > chance + context.config.blind_margin:
            result.flag(
                item.id,
                "blind_answerable",
                f"a text-only model scored {mean:.2f} without the video over {len(scores)} sample(s) "
                f"(chance {chance:.2f})",
                mean,
            )


@cache
def _blank_judge() -> Any:
    """The evaluator's offline blank judge, loaded once per process (its model takes seconds to load)."""
    from expvid.scoring.judges.offline_blank import OfflineBlankJudge

    return OfflineBlankJudge()


def _letter(item: Item, reply: str) -> str | None:
    extraction = extract_answer(reply, item)
    return str(extraction.value) if extraction.ok else None


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


def _support(option: str, cue: set[str]) -> float:
    words = content_lemmas(option)
    return len(words & cue) / len(words) if words else 0.0


def asr_leakage_score(item: Item) -> tuple[float, set[str]]:
    """For a choice item: (the correct option's share of the narration words the question repeats,
    minus the best distractor's share; those words). 0 when the question repeats nothing."""
    narration = content_lemmas(item.context or "")
    cue = content_lemmas(item.question) & narration
    options = item.options or {}
    if not cue or not options:
        return 0.0, cue
    correct = _support(options[str(item.answer)], cue)
    others = [_support(text, cue) for letter, text in options.items() if letter != item.answer]
    return correct - max(others, default=0.0), cue


def asr_leakage(items: list[Item], result: AuditResult) -> None:
    """Flag items answerable from the narration without the video (see the module docstring)."""
    for item in items:
        narration = (item.context or "").strip()
        if not narration:
            continue
        if item.answer_type is AnswerType.CHOICE and _text_options(item):
            score, cue = asr_leakage_score(item)
            if score >= ASR_LEAK_MARGIN:
                result.flag(
                    item.id,
                    "asr_leakage",
                    f"the question repeats the narration ({', '.join(sorted(cue))}), and those words point "
                    f"at the correct option (margin {score:.2f} over the best distractor)",
                    score,
                )
        elif item.answer_type is AnswerType.BLANKS:
            spoken = [a for a in _blanks(item) if len(a.strip()) >= 3 and contains_phrase(narration, a)]
            if spoken:
                result.flag(
                    item.id,
                    "asr_leakage",
                    "blank answer(s) spoken in the video's narration: " + ", ".join(f'"{a}"' for a in spoken),
                    len(spoken) / max(1, len(_blanks(item))),
                )


def _blanks(item: Item) -> list[str]:
    answer = item.answer
    return [str(a) for a in answer] if isinstance(answer, list) else [str(answer)]


def ordering_shortcuts(items: list[Item], result: AuditResult) -> None:
    """Flag step-ordering items whose correct order a solver comparing the options (`ordering.SOLVERS`:
    no video, no step text) picks more often than chance; total each solver's expected accuracy over
    all step-ordering items into `result.ordering_solvers` for the report."""
    totals: dict[str, float] = {}
    counted = 0
    for item in items:
        if item.task != "sequence_ordering" or not item.options:
            continue
        orders = option_orders(item)
        if orders is None:
            result.notes.append(f"{item.id}: options are not numbered lists of the same steps")
            continue
        correct, distractors = orders
        counted += 1
        for name, value in solver_accuracy(correct, distractors).items():
            totals[name] = totals.get(name, 0.0) + value
        found = shortcuts(correct, distractors)
        if found:
            result.flag(item.id, "ordering_shortcut", "a text-only solver can answer: " + "; ".join(found))
    if counted:
        means = {name: round(total / counted, 4) for name, total in totals.items()}
        best = max(means.values())
        result.ordering_solvers = {
            "items": counted,
            "chance": 0.25,
            "best": best,
            "best_solvers": sorted(name for name, value in means.items() if value >= best - 1e-9),
            "accuracy": means,
        }


def everyday_words() -> frozenset[str]:
    """Words common enough to be whole tokens of a general-English vocabulary (the WordPiece vocabulary
    of the bundled MiniLM model). Specialised terms ("hemocytometer", "trypsin") are split into pieces
    there, so they are not in this set; empty when the model package is not installed."""
    try:
        from expvid.scoring.judges.embeddings import default_model_path

        text = (default_model_path() / "vocab.txt").read_text(encoding="utf-8")
    except (ImportError, OSError, RuntimeError):
        return frozenset()
    return frozenset(w for w in text.split() if w.isalpha() and len(w) >= 3)


def implausible_distractors(
    items: list[Item], result: AuditResult, vocabulary: DomainVocabulary, everyday: frozenset[str]
) -> None:
    """Flag distractors out of their experiment's domain (`domain.py`), with the blind audit's evidence.

    Each distractor is judged against its own experiment and discipline: all its identifying words are
    everyday English words and one (not an -ing form) is used neither by the experiment nor by enough
    other experiments of its discipline or of the collection ("garden hose", "claw hammer" for a
    pipetting step). A specialised term the collection never mentions ("hemocytometer") is left alone: it is
    the kind of distractor experts want.
    """
    if not everyday:
        result.notes.append("implausible-distractor audit skipped: no general-English word list")
        return
    for item in items:
        if item.task not in PHRASE_TASKS or not item.options:
            continue
        experiment = str(item.meta.get("video_id") or "")
        blind = result.blind.get(item.id)
        for letter, text in item.options.items():
            if letter == item.answer:
                continue
            foreign = foreign_words(text, experiment, vocabulary, everyday, action=item.task == "operation")
            if foreign is None:
                continue
            evidence = "no blind audit"
            if blind is not None and blind.get("chosen"):
                chosen = blind["chosen"]
                evidence = (
                    f"the text-only model chose it in {chosen.count(letter)} of {len(chosen)} sample(s) and "
                    f"answered correctly in {chosen.count(str(item.answer))}"
                )
            result.flag(
                item.id,
                "implausible_distractor",
                f'option {letter} "{text}" uses everyday words that neither this experiment nor its discipline '
                f"({item.discipline}) uses ({', '.join(foreign)}); {evidence}",
            )


def text_checks(items: list[Item], result: AuditResult) -> None:
    """Answer written in the question (the validity audit's check, `expvid.audit.checks`: for blanks,
    the question as shown, title included); correct option much longer than every other."""
    for item in items:
        found = ItemResult(id=item.id, task=item.task)
        check_answer_in_question(item, found)
        if found.flags:
            result.flag(item.id, "answer_in_question", found.reasons["answer in question"])
        if item.answer_type is not AnswerType.CHOICE or not _text_options(item):
            continue
        options = item.options or {}
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


def position_flags(
    items: list[Item],
    balance: dict[str, dict[str, Any]],
    result: AuditResult,
    drawn: frozenset[str] = frozenset(),
) -> None:
    """When a four-option task's letters are unbalanced (p < 0.05), flag items on over-used letters.

    Tasks in `drawn` had every letter drawn uniformly from the item's own hash (`writer.py`): their
    letter counts and p-value are reported, but a p below 0.05 there is chance (one task in twenty),
    not a bias of the drafts, so their items are not flagged."""
    for task, entry in balance.items():
        p = entry.get("chi_square_p")
        if p is None or p >= 0.05 or task in drawn:
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
