"""Solvers that answer a step-ordering question from its options alone, and their audit.

An ordering question ("which is the correct order of these steps?") offers several orders of the
same steps. A solver that never sees the video, or even the step texts, can still answer when the
option set has a shape: an LLM asked for "plausible but incorrect permutations" perturbs the correct
order a little, once per distractor, so the correct order sits in the middle of the set (the medoid)
or, along a path of swaps, at one end. `SOLVERS` is a battery of such solvers: medoid, farthest,
centre, most eccentric and most isolated option under six distances between orders, Borda, Kemeny,
Condorcet, position plurality, shared neighbours and a unique distance profile (37 in all).

`expvid audit` runs every one of them on every ordering item of a release (`option_orders` reads
an item's options as orders of its steps); the ExpVid recipe runs them on each drafted item
(`shortcuts`, `solver_accuracy`) and rebuilds option sets that defeat all of them
(`expvid.ordering.rebuild.rebuild`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache

from expvid.schema import Item

Perm = tuple[int, ...]
#: A solver's score of each option (it picks the highest; a tie is a guess among the tied).
Solver = Callable[[Sequence[Perm]], list[float]]
EPS = 1e-9


# --- distances between two orders of the same steps ----------------------------------------------


def _positions(order: Sequence[int]) -> dict[int, int]:
    return {step: index for index, step in enumerate(order)}


def kendall(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of pairs of steps that the two orders put the other way round."""
    position = _positions(b)
    ranks = [position[step] for step in a]
    return sum(1 for i, j in itertools.combinations(range(len(ranks)), 2) if ranks[i] > ranks[j])


def footrule(a: Sequence[int], b: Sequence[int]) -> int:
    """Spearman's footrule: total displacement of the steps."""
    pa, pb = _positions(a), _positions(b)
    return sum(abs(pa[s] - pb[s]) for s in pa)


def spearman(a: Sequence[int], b: Sequence[int]) -> int:
    """Spearman's rho distance: total squared displacement."""
    pa, pb = _positions(a), _positions(b)
    return sum((pa[s] - pb[s]) ** 2 for s in pa)


def hamming(a: Sequence[int], b: Sequence[int]) -> int:
    """Positions holding different steps."""
    return sum(1 for x, y in zip(a, b, strict=True) if x != y)


def cayley(a: Sequence[int], b: Sequence[int]) -> int:
    """Fewest transpositions (of any two steps) from one order to the other: n minus the cycles."""
    target = _positions(b)
    mapping = [target[step] for step in a]
    seen = [False] * len(mapping)
    cycles = 0
    for start in range(len(mapping)):
        if not seen[start]:
            cycles += 1
            index = start
            while not seen[index]:
                seen[index] = True
                index = mapping[index]
    return len(mapping) - cycles


def ulam(a: Sequence[int], b: Sequence[int]) -> int:
    """Fewest moves of one step elsewhere: n minus the longest common subsequence."""
    position = _positions(b)
    ranks = [position[step] for step in a]
    tails: list[int] = []  # longest increasing subsequence of ranks
    for rank in ranks:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < rank:
                lo = mid + 1
            else:
                hi = mid
        tails[lo:lo + 1] = [rank]  # fmt: skip
    return len(ranks) - len(tails)


DISTANCES: dict[str, Callable[[Sequence[int], Sequence[int]], int]] = {
    "kendall": kendall,
    "footrule": footrule,
    "spearman": spearman,
    "hamming": hamming,
    "cayley": cayley,
    "ulam": ulam,
}


# --- solvers that see only the options ------------------------------------------------------------


def _to_others(
    options: Sequence[Perm], distance: Callable[[Sequence[int], Sequence[int]], int]
) -> list[list[int]]:
    return [[distance(o, other) for j, other in enumerate(options) if j != i] for i, o in enumerate(options)]


def _distance_solvers() -> dict[str, Solver]:
    solvers: dict[str, Solver] = {}
    for name, distance in DISTANCES.items():

        def medoid(options: Sequence[Perm], d: Callable[..., int] = distance) -> list[float]:
            return [-float(sum(row)) for row in _to_others(options, d)]

        def farthest(options: Sequence[Perm], d: Callable[..., int] = distance) -> list[float]:
            return [float(sum(row)) for row in _to_others(options, d)]

        def centre(options: Sequence[Perm], d: Callable[..., int] = distance) -> list[float]:
            return [-float(max(row)) for row in _to_others(options, d)]

        def eccentric(options: Sequence[Perm], d: Callable[..., int] = distance) -> list[float]:
            return [float(max(row)) for row in _to_others(options, d)]

        def isolated(options: Sequence[Perm], d: Callable[..., int] = distance) -> list[float]:
            return [float(min(row)) for row in _to_others(options, d)]

        solvers[f"{name} medoid"] = medoid
        solvers[f"{name} farthest"] = farthest
        solvers[f"{name} centre (least max distance)"] = centre
        solvers[f"{name} most eccentric"] = eccentric
        solvers[f"{name} most isolated (largest nearest distance)"] = isolated
    return solvers


def _mean_positions(options: Sequence[Perm]) -> dict[int, float]:
    n = len(options[0])
    return {step: sum(o.index(step) for o in options) / len(options) for step in range(n)}


def borda_order(options: Sequence[Perm]) -> Perm | None:
    """The order by mean position over the options; None when two steps tie."""
    mean = _mean_positions(options)
    ordered = sorted(mean, key=lambda step: mean[step])
    values = [mean[s] for s in ordered]
    if any(abs(a - b) < EPS for a, b in itertools.pairwise(values)):
        return None
    return tuple(ordered)


def _borda(options: Sequence[Perm]) -> list[float]:
    order = borda_order(options)
    return [1.0 if o == order else 0.0 for o in options]


def _nearest_to_mean_positions(options: Sequence[Perm]) -> list[float]:
    mean = _mean_positions(options)
    return [-sum(abs(o.index(step) - mean[step]) for step in mean) for o in options]


@cache
def _all_orders(n: int) -> tuple[Perm, ...]:
    return tuple(itertools.permutations(range(n)))


def _kemeny(options: Sequence[Perm]) -> list[float]:
    """Closeness to the Kemeny consensus (the orders nearest to all options together); n <= 7."""
    n = len(options[0])
    if n > 7:
        return [0.0] * len(options)
    totals = {p: sum(kendall(p, o) for o in options) for p in _all_orders(n)}
    best = min(totals.values())
    consensus = [p for p, total in totals.items() if total == best]
    return [-float(min(kendall(o, c) for c in consensus)) for o in options]


def _condorcet(options: Sequence[Perm]) -> list[float]:
    """Pairs of steps an option orders as most options do (a tie in the vote counts half)."""
    n = len(options[0])
    positions = [_positions(o) for o in options]
    scores = [0.0] * len(options)
    for a, b in itertools.combinations(range(n), 2):
        before = sum(1 for p in positions if p[a] < p[b])
        after = len(options) - before
        for i, p in enumerate(positions):
            agrees = before if p[a] < p[b] else after
            other = after if p[a] < p[b] else before
            scores[i] += 1.0 if agrees > other else (0.5 if agrees == other else 0.0)
    return scores


def _position_plurality(options: Sequence[Perm]) -> list[float]:
    """How many other options put the same step at each position."""
    n = len(options[0])
    counts = [Counter(o[k] for o in options) for k in range(n)]
    return [float(sum(counts[k][o[k]] - 1 for k in range(n))) for o in options]


def _shared_neighbours(options: Sequence[Perm]) -> list[float]:
    """Adjacent step pairs an option shares with the other options."""
    pairs = [set(itertools.pairwise(o)) for o in options]
    return [
        float(sum(len(pairs[i] & pairs[j]) for j in range(len(options)) if j != i))
        for i in range(len(options))
    ]


def _unique_profile(options: Sequence[Perm]) -> list[float]:
    """The one option whose sorted Kendall distances to the others no other option has."""
    profiles = [tuple(sorted(row)) for row in _to_others(options, kendall)]
    counts = Counter(profiles)
    return [1.0 if counts[p] == 1 and len(counts) > 1 else 0.0 for p in profiles]


SOLVERS: dict[str, Solver] = {
    **_distance_solvers(),
    "borda (mean position) order": _borda,
    "nearest to the mean positions": _nearest_to_mean_positions,
    "nearest to the kemeny consensus": _kemeny,
    "condorcet (pairwise majority)": _condorcet,
    "position plurality": _position_plurality,
    "shared neighbouring pairs": _shared_neighbours,
    "unique distance profile": _unique_profile,
}


def chosen(options: Sequence[Perm], solver: Solver) -> set[int]:
    """The options a solver ties on as best (it guesses among them)."""
    scores = solver(options)
    best = max(scores)
    return {i for i, score in enumerate(scores) if score >= best - EPS}


def solver_accuracy(correct: Perm, distractors: Sequence[Perm]) -> dict[str, float]:
    """Each solver's expected accuracy on this option set (a tie is a uniform guess among the tied)."""
    options = [correct, *distractors]
    accuracy = {}
    for name, solver in SOLVERS.items():
        picked = chosen(options, solver)
        accuracy[name] = 1.0 / len(picked) if 0 in picked else 0.0
    return accuracy


def shortcuts(correct: Perm, distractors: Sequence[Perm]) -> list[str]:
    """The solvers that beat chance on this option set, with their expected accuracy (empty: none)."""
    chance = 1.0 / (len(distractors) + 1)
    return [
        f"{name} ({accuracy:.2f} vs chance {chance:.2f})"
        for name, accuracy in solver_accuracy(correct, distractors).items()
        if accuracy > chance + EPS
    ]


def symmetric(correct: Perm, distractors: Sequence[Perm]) -> bool:
    """Every option has the same sorted distances to the others, under every distance: no solver
    that looks only at the orders can tell the options apart."""
    options = [correct, *distractors]
    for distance in DISTANCES.values():
        profiles = {tuple(sorted(row)) for row in _to_others(options, distance)}
        if len(profiles) != 1:
            return False
    return True


_NUMBERED = re.compile(r"^\s*\d+\s*[.)]\s*", re.MULTILINE)


def _steps(text: str) -> list[str]:
    return [line.strip() for line in _NUMBERED.split(text) if line.strip()]


def option_orders(item: Item) -> tuple[Perm, list[Perm]] | None:
    """The item's options as orders of its steps: (the correct order, the distractors), each a tuple
    of the correct option's step positions; None when the options are not numbered lists of the same
    steps (not an ordering question)."""
    options = item.options or {}
    if str(item.answer) not in options or len(options) < 2:
        return None
    truth = _steps(options[str(item.answer)])
    index = {text: i for i, text in enumerate(truth)}
    if len(truth) < 2 or len(index) != len(truth):
        return None
    distractors = []
    for letter, text in options.items():
        if letter == item.answer:
            continue
        pieces = _steps(text)
        if sorted(pieces) != sorted(truth):
            return None
        distractors.append(tuple(index[p] for p in pieces))
    return tuple(range(len(truth))), distractors


def orders_by_letter(item: Item) -> dict[str, Perm] | None:
    """Every option's order (letter -> order, the correct one the identity), or None (see `option_orders`)."""
    found = option_orders(item)
    if found is None:
        return None
    correct, distractors = found
    others = iter(distractors)
    return {letter: correct if letter == item.answer else next(others) for letter in item.options or {}}
