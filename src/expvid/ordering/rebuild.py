"""Step-ordering options that no solver comparing the options can read the answer from.

An LLM asked for "plausible but incorrect permutations" (G.2.3) perturbs the correct order a little,
once per distractor, so the correct order sits in the middle of the option set (the medoid), or, in
a path of swaps C -> D1 -> D2 -> D3, at one end ("pick the option farthest from the others" then
answers half of the items). A solver that never sees the video, or even the step texts, answers such
items by geometry alone. The battery of such solvers (`SOLVERS`: medoid, farthest, centre and most
eccentric option under six distances between orderings, Borda, Kemeny, Condorcet, position
plurality, shared neighbours, a unique distance profile) and the check that runs them (`shortcuts`,
`solver_accuracy`) live in `expvid.ordering.solvers`, where `expvid audit` runs them on any release;
this module builds the option sets that defeat all of them (`rebuild`).

Rebuilt sets are SYMMETRIC: a group of transformations that no solver can see maps the set onto
itself and any option onto any other, so every solver that looks only at the orderings gives each
option the same score, and its expected accuracy is exactly chance (1/4):

- 4 or more steps: the correct order C, C with one adjacent pair swapped (A), C with another,
  disjoint, adjacent pair swapped (B), and C with both swapped. Renaming the two steps of A (or of B)
  maps the set onto itself and C onto C+A (C+B): the Klein four-group acts transitively, and renaming
  steps changes nothing a text-blind solver can compare. A is the model's own single-swap distractor
  when it has one, so the set keeps the model's most plausible confusion; every distractor is one or
  two adjacent swaps from C.
- 3 steps: no set of 4 of the 6 orders is symmetric under renaming steps alone (4 does not divide 6),
  so the set is symmetric under renaming and reversing the order, which every distance between
  orderings ignores: C, C with one adjacent swap, the reversal of C and the reversal of that swap
  ({123, 213, 321, 312}). Every distance-based solver is at chance; a heuristic outside distances
  (e.g. "prefer orders that share their last step") could still tell the pairs apart.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from expvid.ordering.solvers import SOLVERS, Perm, kendall, shortcuts, solver_accuracy, symmetric

__all__ = ["SOLVERS", "Perm", "kendall", "rebuild", "shortcuts", "solver_accuracy", "symmetric"]


def _swap(order: Perm, position: int) -> Perm:
    items = list(order)
    items[position], items[position + 1] = items[position + 1], items[position]
    return tuple(items)


def _swapped_at(correct: Perm, other: Perm) -> int | None:
    """The position p when `other` is `correct` with steps p and p+1 swapped."""
    for p in range(len(correct) - 1):
        if _swap(correct, p) == tuple(other):
            return p
    return None


def rebuild(correct: Perm, llm_distractors: Sequence[Perm], rng: random.Random) -> list[Perm] | None:
    """Three distractors forming a symmetric set with `correct` (module docstring); None below 3 steps."""
    n = len(correct)
    if n < 3:
        return None
    llm_swaps = [p for p in (_swapped_at(correct, d) for d in llm_distractors) if p is not None]
    if n == 3:
        first = llm_swaps[0] if llm_swaps else rng.randrange(2)
        swapped = _swap(correct, first)
        return [swapped, tuple(reversed(correct)), tuple(reversed(swapped))]
    pairs = [
        (a, b) for a in range(n - 1) for b in range(n - 1) if b >= a + 2 or a >= b + 2
    ]  # disjoint adjacent swaps
    preferred = [(a, b) for a, b in pairs if a in llm_swaps]
    a, b = rng.choice(preferred or pairs)
    one = _swap(correct, a)
    return [one, _swap(correct, b), _swap(one, b)]
