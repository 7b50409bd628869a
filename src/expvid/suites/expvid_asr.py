"""What the ASR ablation (`-S with_asr=true`) means on a benchmark built by `expvid build`: the narration
names the answer.

ExpVid's release carries `asr_caption` (the clip's narration) in every record, and `-S with_asr=true` shows
it to the model (an ablation; the main setting never does). On a benchmark drafted by `expvid build`
the Level-1 answers are extracted FROM that narration (G.1: a target must be spoken, "Do not
hallucinate"), so a solver that only counts the words an option shares with the narration, with no
model and no video, answers most Level-1 items (93-100% per task on the scripted sample). A
`-S with_asr=true` score on such a benchmark measures reading, not seeing; this module measures that
solver on the run's own items so the report can say so with a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from expvid.media.words import content_lemmas
from expvid.schema import AnswerType, Item

#: Files only a candidate directory from `expvid build` (or an export of one) has.
BUILT_MARKERS = ("provenance.jsonl", "build_report.json")


def is_built_benchmark(root: Path | str | None) -> bool:
    return root is not None and any((Path(root) / name).is_file() for name in BUILT_MARKERS)


def word_overlap_answer(item: Item) -> str | None:
    """The option sharing the most words with the narration; None on a tie or without narration."""
    narration = content_lemmas(item.context or "")
    if not narration or not item.options:
        return None
    scores = {letter: len(content_lemmas(text) & narration) for letter, text in item.options.items()}
    best = max(scores.values())
    winners = [letter for letter, score in scores.items() if score == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def word_overlap_accuracy(items: Sequence[Item]) -> tuple[int, int]:
    """(answered correctly, Level-1 choice items with narration) for the word-overlap solver."""
    level1 = [
        i for i in items if i.level == 1 and i.answer_type is AnswerType.CHOICE and (i.context or "").strip()
    ]
    return sum(word_overlap_answer(i) == str(i.answer) for i in level1), len(level1)


def asr_shortcut_note(root: Path | str | None, items: Sequence[Item]) -> str | None:
    """The report note for a `-S with_asr=true` run of a built benchmark (None for other data)."""
    if not is_built_benchmark(root):
        return None
    correct, total = word_overlap_accuracy(items)
    if not total:
        return None
    return (
        f"-S with_asr=true (the ASR ablation) on a benchmark built by expvid build: asr_caption is each clip's narration and Level-1 "
        f"answers were extracted from it, so a word-overlap solver (no model, no video) answers {correct}/{total} "
        f"({correct / total:.0%}) of this run's Level-1 items from it; compare Level-1 scores with that, not chance"
    )
