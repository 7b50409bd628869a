"""Per-item metrics, exactly as the ExpVid paper defines them (section 4, appendix F.1).

- Top-1 accuracy for every multiple-choice task and for step prediction: 1 if the extracted
  letter / step number equals the gold one, else 0.
- Sequence generation: Jaccard index of the predicted and gold step-number SETS,
  |A ∩ B| / |A ∪ B| (order and duplicates do not matter; an empty prediction scores 0).
- Level 3: blank-level accuracy. An item with n blanks is worth n units; each blank the judge
  accepts earns one. Task scores then divide total earned by total blanks, so a 4-blank item
  weighs 4 times a 1-blank item, as "correctly filled blanks divided by the total number of
  blanks" requires.
- Boxes (beyond the paper): IoU with greedy one-to-one matching of predicted to gold boxes (best
  pair first), summed and divided by the number of gold boxes; a suite whose official scorer
  matches otherwise scores its boxes itself.

An item whose extraction failed or found nothing earns 0 of its full weight; an item whose judge
failed earns 0 too but carries `judge_error`, so the aggregate can count it (see `aggregate`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from expvid.schema import AnswerType, Box, Item, ItemScore, Judgment
from expvid.scoring.extraction import Extraction


def jaccard(predicted: Iterable[int], gold: Iterable[int]) -> float:
    """|A ∩ B| / |A ∪ B| over sets; 0 when either side is empty."""
    a, b = set(predicted), set(gold)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def box_iou(a: Box, b: Box) -> float:
    width = min(a.x2, b.x2) - max(a.x1, b.x1)
    height = min(a.y2, b.y2) - max(a.y1, b.y1)
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def greedy_box_iou(predicted: Sequence[Box], gold: Sequence[Box]) -> float:
    """Sum of IoUs of a greedy one-to-one matching (best pair first) divided by the gold count."""
    if not gold:
        return 0.0
    pairs = sorted(
        ((box_iou(p, g), i, j) for i, p in enumerate(predicted) for j, g in enumerate(gold)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    total = 0.0
    for iou, i, j in pairs:
        if iou <= 0 or i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        total += iou
    return total / len(gold)


def possible_units(item: Item) -> float:
    """How much an item weighs in its task: its number of blanks for level 3, else 1."""
    return float(item.n_blanks) if item.answer_type is AnswerType.BLANKS else 1.0


def needs_judge(item: Item, extraction: Extraction) -> bool:
    """True when the item's score depends on a judge (blanks, free text) and there is an answer."""
    return extraction.ok and item.answer_type in (AnswerType.BLANKS, AnswerType.FREE_TEXT)


def video_id_of(item: Item) -> str | None:
    """The video an item was cut from (the cluster unit of the bootstrap), from `meta["video_id"]`."""
    value = item.meta.get("video_id")
    return None if value is None or value == "" else str(value)


def score_item(
    item: Item,
    extraction: Extraction,
    judgment: Judgment | None = None,
    *,
    graded_max: float | None = None,
    judged: bool = False,
) -> ItemScore:
    """Score one item from its extraction (and its judgment, for judged answer types).

    `graded_max` is the top of a graded judge's scale (2 for a ternary judge, 10) for free-text items;
    their earned value is `judgment.score / graded_max`. `judged=True` scores any item that way
    (a protocol whose judge also decides multiple-choice answers). Raises
    ValueError when a judged item comes without its judgment: that is a bug in the caller, not a zero.
    """
    base = {
        "item_id": item.id,
        "task": item.task,
        "status": extraction.status,
        "extracted": extraction.value,
        "possible": possible_units(item),
        "discipline": item.discipline,
        "video_id": video_id_of(item),
    }
    if not extraction.ok:
        return ItemScore(earned=0.0, **base)
    kind = AnswerType.FREE_TEXT if judged else item.answer_type
    if kind in (AnswerType.CHOICE, AnswerType.STEP_NUMBER):
        return ItemScore(earned=float(extraction.value == item.answer), **base)
    if kind is AnswerType.STEP_SEQUENCE:
        return ItemScore(earned=jaccard(extraction.value, item.answer), **base)  # type: ignore[arg-type]
    if kind is AnswerType.BOXES:
        return ItemScore(earned=greedy_box_iou(extraction.value, item.answer), **base)  # type: ignore[arg-type]
    if judgment is None:
        raise ValueError(f"item {item.id} ({kind.value}) needs a judgment to be scored")
    if judgment.item_id != item.id:
        raise ValueError(f"judgment for {judgment.item_id} given for item {item.id}")
    if judgment.error is not None:
        return ItemScore(earned=0.0, judge_error=judgment.error, **base)
    if kind is AnswerType.BLANKS:
        verdicts = judgment.verdicts or []
        if len(verdicts) != item.n_blanks:
            problem = f"judgment has {len(verdicts)} verdict(s) for {item.n_blanks} blank(s)"
            return ItemScore(earned=0.0, judge_error=problem, **base)
        return ItemScore(earned=float(sum(verdicts)), **base)
    if graded_max is None or graded_max <= 0:
        raise ValueError(f"item {item.id}: free-text scoring needs graded_max (the judge scale's top)")
    if judgment.score is None:
        return ItemScore(earned=0.0, judge_error="judgment has no score", **base)
    return ItemScore(earned=min(max(judgment.score / graded_max, 0.0), 1.0), **base)
