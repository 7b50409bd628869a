"""Level-2 step lists: applying an expert's edit, and rebuilding the derived questions from it.

ExpVid section 3.3: for procedural understanding experts "check consistency between step lists and
segments by removing unobserved steps, correcting timestamp errors, refining vague descriptions, and
adding missing operations". The four Level-2 questions are then derived from the step lists:

- sequence generation and step prediction embed the experiment's *full* numbered step list;
- step ordering's options are orderings of the segment's steps;
- completeness verification lists the segment's steps (numbered 1..k) and asks which is missing.

An edit is a list of rows in display order. A row either refers to an existing step of the full list
(`ref` = its number; its text and times may change) or is a new operation (`ref` = None), which is
inserted into the full list after the step of the row before it. Inserting renumbers the steps after
it, for every segment of the experiment; `StepListChange.renumber` maps old numbers to new ones.

Answers follow step *identity*: if the answer of a completeness-verification item was "the step
'Rinse the syringe'", it still is after renumbering; if that step was removed from the segment the
item cannot be rebuilt (`RebuildError`) and needs an adjudicator. Rebuilt question texts keep the
original wording around the step list (its stem and suffix) and write the list as "N. text" lines.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from expvid.platform.services.content import Content
from expvid.schema import OPTION_LETTERS

_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s*")
_SPACES = re.compile(r"\s+")
#: Step times are typed to a tenth of a second; touching steps (end == next start) are fine.
_TIME_EPS = 1e-3

#: Fallback question stems from the paper's prompts (appendix F.4) when the original stem is not found.
DEFAULT_STEMS = {
    "sequence_generation": "Based on the full step list, determine the step numbers shown in the video.\n"
    "Full Step List:\n",
    "step_prediction": "Given all steps of the experiment, please predict the next operation that will take "
    "place after this video segment.\nFull Step List:\n",
    "video_verification": "Given the complete step list, which step was *not* performed in the video?\n"
    "Step List:\n",
}


@dataclass(frozen=True)
class Step:
    """A step of a segment; `number` indexes the experiment's full step list (1-based)."""

    number: int
    text: str
    start: float | None = None
    end: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, "text": self.text, "start": self.start, "end": self.end}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        return cls(
            number=int(data["number"]),
            text=str(data["text"]),
            start=None if data.get("start") is None else float(data["start"]),
            end=None if data.get("end") is None else float(data["end"]),
        )


@dataclass(frozen=True)
class StepRow:
    """One row of an edited segment step list, in display order."""

    ref: int | None
    text: str
    start: float | None = None
    end: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "text": self.text, "start": self.start, "end": self.end}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepRow:
        ref = data.get("ref")
        return cls(
            ref=None if ref in (None, "") else int(ref),
            text=str(data.get("text", "")),
            start=None if data.get("start") in (None, "") else float(data["start"]),
            end=None if data.get("end") in (None, "") else float(data["end"]),
        )


class StepEditError(ValueError):
    """An edit that cannot be applied; `problems` says why, row by row."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class RebuildError(ValueError):
    """A derived question cannot be rebuilt from the new step list (its answer step was removed...)."""


@dataclass(frozen=True)
class StepListChange:
    full_steps: list[str]
    segment_steps: list[Step]
    #: Old step number -> new step number, for every step of the old full list.
    renumber: dict[int, int]

    @property
    def shifts_numbers(self) -> bool:
        return any(old != new for old, new in self.renumber.items())


def rows_from_steps(steps: Sequence[Step]) -> list[StepRow]:
    """The unedited rows of a segment (what the editor starts from)."""
    return [StepRow(ref=s.number, text=s.text, start=s.start, end=s.end) for s in steps]


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def normalized_rows(rows: Sequence[StepRow]) -> list[tuple[int | None, str, float | None, float | None]]:
    """Rows compared by reference, whitespace-normalised text and times to 0.1 s."""
    return [(r.ref, _norm(r.text), _round(r.start), _round(r.end)) for r in rows]


def rows_change_anything(steps: Sequence[Step], rows: Sequence[StepRow]) -> bool:
    return normalized_rows(rows_from_steps(steps)) != normalized_rows(rows)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def time_problems(
    rows: Sequence[StepRow], window: tuple[float | None, float | None] | None = None
) -> list[str]:
    """Step times that cannot be right: not numbers, negative, inverted, outside the segment's
    window, or overlapping the row before (steps are consecutive operations of one procedure)."""
    problems: list[str] = []
    start_w, end_w = window if window is not None else (None, None)
    for position, row in enumerate(rows, start=1):
        label = f"row {position}"
        for name, value in (("start", row.start), ("end", row.end)):
            if value is None:
                continue
            if not math.isfinite(value):
                problems.append(f"{label}: the {name} time is not a number of seconds")
            elif value < 0:
                problems.append(f"{label}: the {name} time is negative")
            elif (start_w is not None and value < start_w - _TIME_EPS) or (
                end_w is not None and value > end_w + _TIME_EPS
            ):
                span = f"{start_w or 0.0:g}-{end_w:g} s" if end_w is not None else f"from {start_w:g} s"
                problems.append(
                    f"{label}: the {name} time ({_seconds(value)}) lies outside the segment ({span})"
                )
        if row.start is not None and row.end is not None and row.end <= row.start:
            problems.append(f"{label}: end time ({row.end}) must be after start time ({row.start})")
    timed = [(p, r) for p, r in enumerate(rows, start=1) if r.start is not None or r.end is not None]
    for (p_prev, prev), (p, row) in itertools.pairwise(timed):
        prev_end = prev.end if prev.end is not None else prev.start
        if prev_end is not None and row.start is not None and row.start < prev_end - _TIME_EPS:
            problems.append(
                f"rows {p_prev} and {p} overlap: row {p_prev} ends at {_seconds(prev_end)}, "
                f"row {p} starts at {_seconds(row.start)}"
            )
    return problems


def apply_step_edit(
    full_steps: Sequence[str],
    segment: Sequence[Step],
    rows: Sequence[StepRow],
    *,
    window: tuple[float | None, float | None] | None = None,
) -> StepListChange:
    """Apply an edited segment step list to the experiment's full list (see the module docstring).

    `window` is the segment's (start, end) in the same time base as the step times; step times
    outside it are refused, as are overlapping steps.
    """
    problems: list[str] = []
    n_full = len(full_steps)
    if not rows:
        problems.append("the segment needs at least one step (reject the item instead)")
    refs = [r.ref for r in rows if r.ref is not None]
    for position, row in enumerate(rows, start=1):
        label = f"row {position}"
        if not _norm(row.text):
            problems.append(f"{label}: the step text is empty")
        if row.ref is not None and not 1 <= row.ref <= n_full:
            problems.append(f"{label}: step {row.ref} is not in the experiment's step list (1-{n_full})")
    problems += time_problems(rows, window)
    duplicates = sorted({r for r in refs if refs.count(r) > 1})
    if duplicates:
        problems.append(f"step(s) {duplicates} appear twice")
    if problems:
        raise StepEditError(problems)

    # Where each new operation goes: after the old step of the row before it.
    first_ref = refs[0] if refs else (min((s.number for s in segment), default=n_full + 1))
    anchor = first_ref - 1 if rows and rows[0].ref is None else 0
    inserts: dict[int, list[int]] = {}  # anchor old number -> row positions inserted after it
    for position, row in enumerate(rows):
        if row.ref is None:
            inserts.setdefault(anchor, []).append(position)
        else:
            anchor = row.ref

    def new_number(old: int) -> int:
        return old + sum(len(rows_at) for a, rows_at in inserts.items() if a < old)

    renumber = {old: new_number(old) for old in range(1, n_full + 1)}
    new_for_row: dict[int, int] = {}
    for a, rows_at in inserts.items():
        base = 0 if a == 0 else renumber[a]
        for j, position in enumerate(rows_at):
            new_for_row[position] = base + 1 + j
    for position, row in enumerate(rows):
        if row.ref is not None:
            new_for_row[position] = renumber[row.ref]

    numbers = [new_for_row[p] for p in range(len(rows))]
    for position in range(1, len(rows)):
        if numbers[position] <= numbers[position - 1]:
            problems.append(
                f"row {position + 1} (step {rows[position].ref}) comes after step {rows[position - 1].ref}; "
                "rows must keep the experiment's step order"
            )
    if problems:
        raise StepEditError(problems)

    edited_text = {r.ref: _norm(r.text) for r in rows if r.ref is not None}
    new_full: list[str] = []
    for old in range(0, n_full + 1):
        if old >= 1:
            new_full.append(edited_text.get(old, full_steps[old - 1]))
        for position in inserts.get(old, []):
            new_full.append(_norm(rows[position].text))
    new_segment = [
        Step(number=numbers[p], text=_norm(r.text), start=r.start, end=r.end) for p, r in enumerate(rows)
    ]
    return StepListChange(full_steps=new_full, segment_steps=new_segment, renumber=renumber)


def renumber_segment(steps: Sequence[Step], change: StepListChange) -> list[Step]:
    """Another segment of the same experiment after `change`: new numbers, texts from the new list."""
    renumbered = []
    for step in steps:
        number = change.renumber.get(step.number, step.number)
        text = change.full_steps[number - 1] if number <= len(change.full_steps) else step.text
        renumbered.append(Step(number=number, text=text, start=step.start, end=step.end))
    return renumbered


# --- rebuilding derived questions -------------------------------------------------------------------


def _numbered(texts: Sequence[str]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(texts, start=1))


def replace_step_list(question: str, old_texts: Sequence[str], new_texts: Sequence[str], task: str) -> str:
    """Swap the step list embedded in `question` for a new one, keeping the text around it."""
    if old_texts:
        first = question.find(old_texts[0])
        last = question.rfind(old_texts[-1])
        if first != -1 and last >= first:
            stem = question[:first]
            # Drop the "1. " of the first line (absent in some release questions, formats.md).
            stem = re.sub(r"(^|\n)[ \t]*1[.)][ \t]*$", r"\1", stem)
            suffix = question[last + len(old_texts[-1]) :]
            return f"{stem}{_numbered(new_texts)}{suffix}"
    return f"{DEFAULT_STEMS.get(task, '')}{_numbered(new_texts)}"


def _same_kind(template: Any, number: int) -> Any:
    """Write a step number in the type the release used (numeric string or integer)."""
    return str(number) if isinstance(template, str) else number


def _option_lines(text: str) -> tuple[list[str], bool]:
    lines = [line for line in text.split("\n") if line.strip()]
    numbered = bool(lines) and all(_NUMBERED.match(line) for line in lines)
    return [_norm(_NUMBERED.sub("", line)) for line in lines], numbered


def _render_option(texts: Sequence[str], numbered: bool) -> str:
    return _numbered(texts) if numbered else "\n".join(texts)


def _distractor_orders(n: int, count: int, seed: str) -> list[tuple[int, ...]]:
    """`count` distinct non-identity orderings of n steps, chosen deterministically from `seed`."""
    identity = tuple(range(n))
    if n <= 6:
        pool = [p for p in itertools.permutations(range(n)) if p != identity]
        if len(pool) < count:
            raise RebuildError(f"{n} step(s) allow only {len(pool)} wrong ordering(s); {count} are needed")
        return random.Random(seed).sample(pool, count)
    rng = random.Random(seed)
    chosen: list[tuple[int, ...]] = []
    while len(chosen) < count:
        order = list(range(n))
        rng.shuffle(order)
        candidate = tuple(order)
        if candidate != identity and candidate not in chosen:
            chosen.append(candidate)
    return chosen


def rebuild_content(
    task: str,
    content: Content,
    *,
    key: str,
    old_full: Sequence[str],
    new_full: Sequence[str],
    old_segment: Sequence[Step],
    new_segment: Sequence[Step],
    renumber: dict[int, int],
) -> Content:
    """The item's content derived from the new step lists (see the module docstring for the rules)."""
    if task == "sequence_generation":
        question = replace_step_list(content.question, old_full, new_full, task)
        template = content.answer[0] if isinstance(content.answer, list) and content.answer else "1"
        answer = [_same_kind(template, s.number) for s in new_segment]
        return Content(question=question, options=content.options, answer=answer)

    if task == "step_prediction":
        old_answer = int(content.answer)
        if old_answer not in renumber:
            raise RebuildError(f"the answer step {old_answer} is not in the experiment's step list")
        old_numbers = {s.number for s in old_segment}
        new_answer = renumber[old_answer]
        if old_answer in old_numbers and new_answer not in {s.number for s in new_segment}:
            raise RebuildError(f"the predicted step ({old_answer}) was removed from the segment")
        question = replace_step_list(content.question, old_full, new_full, task)
        return Content(
            question=question, options=content.options, answer=_same_kind(content.answer, new_answer)
        )

    if task == "video_verification":
        options = content.options or {}
        try:
            old_local = int(options[content.answer])
            removed = old_segment[old_local - 1].number
        except (KeyError, ValueError, IndexError):
            raise RebuildError(f"the answer {content.answer!r} does not name a step of the segment") from None
        new_numbers = [s.number for s in new_segment]
        if renumber.get(removed) not in new_numbers:
            raise RebuildError(
                f"the step missing from the clip (step {removed}) was removed from the segment"
            )
        new_local = new_numbers.index(renumber[removed]) + 1
        if new_local == len(new_numbers):
            raise RebuildError(
                "the step missing from the clip is now the segment's last step (must be non-final)"
            )
        if len(new_numbers) > len(OPTION_LETTERS):
            raise RebuildError(f"{len(new_numbers)} steps exceed the {len(OPTION_LETTERS)} option letters")
        question = replace_step_list(
            content.question, [s.text for s in old_segment], [s.text for s in new_segment], task
        )
        new_options = {OPTION_LETTERS[i]: str(i + 1) for i in range(len(new_numbers))}
        return Content(question=question, options=new_options, answer=OPTION_LETTERS[new_local - 1])

    if task == "sequence_ordering":
        options = content.options or {}
        correct = content.answer
        if correct not in options:
            raise RebuildError(f"the answer {correct!r} is not an option")
        _, numbered = _option_lines(options[correct])
        old_texts = [_norm(s.text) for s in old_segment]
        new_texts = [s.text for s in new_segment]
        old_ids = [s.number for s in old_segment]
        new_ids = [next((o for o, n in renumber.items() if n == s.number), None) for s in new_segment]
        same_steps = sorted(old_ids) == sorted(i for i in new_ids if i is not None) and None not in new_ids
        orders: dict[str, tuple[int, ...]] = {}
        if same_steps:
            # Keep each distractor's ordering, mapped through step identity.
            for letter, text in options.items():
                if letter == correct:
                    continue
                lines, _ = _option_lines(text)
                if sorted(lines) != sorted(old_texts) or len(set(lines)) != len(lines):
                    break
                order_ids = [old_ids[old_texts.index(line)] for line in lines]
                orders[letter] = tuple(new_ids.index(i) for i in order_ids)
        wrong_letters = [letter for letter in options if letter != correct]
        if len(orders) != len(wrong_letters):
            generated = _distractor_orders(len(new_texts), len(wrong_letters), seed=key)
            orders = dict(zip(wrong_letters, generated, strict=True))
        new_options = {}
        for letter in options:
            order = tuple(range(len(new_texts))) if letter == correct else orders[letter]
            new_options[letter] = _render_option([new_texts[i] for i in order], numbered)
        return Content(question=content.question, options=new_options, answer=correct)

    raise RebuildError(f"task {task!r} is not derived from a step list")
