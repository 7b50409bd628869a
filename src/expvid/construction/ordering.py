"""Step-ordering options that a text-only solver cannot read the answer from.

An LLM asked for "plausible but incorrect permutations" (G.2.3) perturbs the correct order a little,
once per distractor, so the correct order sits in the middle of the option set: it is the option with
the smallest total Kendall distance to the others (the set's medoid), and the per-step average position
over the four options (Borda) is the correct order again. A solver that never sees the video, or even
the step texts, answers such items by geometry alone. This module detects that (`shortcuts`) and
builds distractors that do not have it (`rebuild`).

The rebuilt set is a straight path of adjacent swaps C -> D1 -> D2 -> D3 (each one more step away
from the correct order C): its Kendall distances form a path metric, which the reversal D3 -> C maps
onto itself, so C and D3 look exactly alike to any solver that only compares the options (same
distance profile), the medoid is D1 or D2 (tied), and Borda lands between them. D1 is one of the
LLM's own distractors when one is a single swap from C, so the set keeps the model's most plausible
confusion; every distractor stays within three adjacent swaps of the true order.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

Perm = tuple[int, ...]


def kendall(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of pairs of steps that the two orders put the other way round."""
    position = {step: index for index, step in enumerate(b)}
    ranks = [position[step] for step in a]
    return sum(1 for i, j in itertools.combinations(range(len(ranks)), 2) if ranks[i] > ranks[j])


def _borda(options: Sequence[Perm]) -> Perm | None:
    """The order by mean position over the options; None when two steps tie."""
    n = len(options[0])
    mean = {step: sum(o.index(step) for o in options) / len(options) for step in range(n)}
    ordered = sorted(range(n), key=lambda step: mean[step])
    values = [mean[s] for s in ordered]
    if any(abs(a - b) < 1e-9 for a, b in itertools.pairwise(values)):
        return None
    return tuple(ordered)


def shortcuts(correct: Perm, distractors: Sequence[Perm]) -> list[str]:
    """How a text-only solver recovers `correct` from the option set alone (empty: it cannot)."""
    options = [correct, *distractors]
    totals = [sum(kendall(o, other) for other in options) for o in options]
    found = []
    if totals[0] < min(totals[1:]):
        found.append(
            f"the correct order is the options' Kendall medoid (total distance {totals[0]} vs "
            f"{min(totals[1:])} for the nearest distractor)"
        )
    if _borda(options) == correct:
        found.append("the mean position of each step over the options is the correct order")
    return found


def symmetric(correct: Perm, distractors: Sequence[Perm]) -> bool:
    """A distractor has the same sorted distances to the other options as the correct order."""
    options = [correct, *distractors]

    def profile(o: Perm) -> list[int]:
        return sorted(kendall(o, other) for other in options if other is not o)

    target = profile(correct)
    return any(profile(d) == target for d in distractors)


def _swap(order: Perm, position: int) -> Perm:
    items = list(order)
    items[position], items[position + 1] = items[position + 1], items[position]
    return tuple(items)


def _path(correct: Perm, first: Perm, rng: random.Random) -> list[Perm] | None:
    """C -> first -> D2 -> D3, each a swap that moves one step further from C."""
    path = [first]
    while len(path) < 3:
        current = path[-1]
        rank = {step: i for i, step in enumerate(correct)}
        forward = [p for p in range(len(current) - 1) if rank[current[p]] < rank[current[p + 1]]]
        if not forward:
            return None
        path.append(_swap(current, rng.choice(forward)))
    return path


def rebuild(correct: Perm, llm_distractors: Sequence[Perm], rng: random.Random) -> list[Perm] | None:
    """Three distractors without a shortcut (see the module docstring); None for fewer than 3 steps."""
    n = len(correct)
    if n < 3:
        return None
    singles = [d for d in llm_distractors if kendall(correct, d) == 1]
    firsts = singles or [_swap(correct, p) for p in range(n - 1)]
    for _ in range(32):
        path = _path(correct, rng.choice(firsts), rng)
        if path is not None and len(set(path)) == 3 and not shortcuts(correct, path):
            return path
    return None
