"""Generated releases for the audit's tests and benchmark: clean items, and items with planted shortcuts.

A clean item draws its options independently from one pool and its answer letter uniformly, so no
text-only solver can beat chance on it in expectation. A planted item carries one known artefact:

- "longest": the correct option is the only long one;
- "middle": numeric options spread symmetrically around the correct value (it is their mean,
  median and middle rank);
- "roundest": the correct value has one or two significant digits, the distractors three;
- "twins": a second option is the correct one written again ("98 %" / "98%", a final period, an
  article dropped, "0.5" / ".5").
"""

from __future__ import annotations

import random

from expvid.schema import AnswerType, Item

LETTERS = "ABCDEFGHIJ"
_MATERIALS = [
    "glass",
    "plastic",
    "steel",
    "ceramic",
    "rubber",
    "nylon",
    "copper",
    "quartz",
    "teflon",
    "paper",
]
_THINGS = [
    "pipette", "beaker", "spatula", "flask", "funnel", "tweezers", "scalpel", "cuvette", "syringe", "crucible",
    "burette", "stirrer", "petri dish", "test tube", "mortar", "sieve", "clamp", "tongs", "vial", "filter",
]  # fmt: skip
_UNITS = ["mL", "mg", "min", "°C", "rpm", "µL"]


def _phrases(rng: random.Random, k: int) -> list[str]:
    pairs = rng.sample([(m, t) for m in _MATERIALS for t in _THINGS], k)
    return [f"{material} {thing}" for material, thing in pairs]


def _item(index: int, task: str, question: str, options: list[str], correct: int, rng: random.Random) -> Item:
    order = list(range(len(options)))
    rng.shuffle(order)
    shown = [options[i] for i in order]
    return Item(
        id=f"{task}/{index}",
        suite="generated",
        task=task,
        question=question,
        options=dict(zip(LETTERS, shown, strict=False)),
        answer=LETTERS[order.index(correct)],
        answer_type=AnswerType.CHOICE,
    )


def clean_text(index: int, rng: random.Random, task: str = "names", k: int = 4) -> Item:
    return _item(
        index, task, f"Which instrument is handled in clip {index}?", _phrases(rng, k), rng.randrange(k), rng
    )


def _value(rng: random.Random) -> str:
    digits = rng.choice([1, 2, 3])
    value = rng.uniform(1, 500)
    return f"{value:.{digits}g}"


def clean_number(index: int, rng: random.Random, task: str = "amounts", k: int = 5) -> Item:
    unit = rng.choice(_UNITS)
    values = []
    while len(values) < k:
        text = _value(rng)
        if text not in values:
            values.append(text)
    return _item(
        index,
        task,
        f"How much is used in clip {index}?",
        [f"{v} {unit}" for v in values],
        rng.randrange(k),
        rng,
    )


def planted_longest(index: int, rng: random.Random, task: str = "longest") -> Item:
    options = _phrases(rng, 4)
    options[0] = f"{options[0]} with a sterile filter and its holder"
    return _item(index, task, f"Which instrument is handled in clip {index}?", options, 0, rng)


def planted_middle(index: int, rng: random.Random, task: str = "middle") -> Item:
    centre = rng.randint(20, 400)
    step = rng.choice([2, 5, 10])
    values = [centre + step * offset for offset in (0, -2, -1, 1, 2)]
    unit = rng.choice(_UNITS)
    return _item(index, task, f"How much is used in clip {index}?", [f"{v} {unit}" for v in values], 0, rng)


def planted_roundest(index: int, rng: random.Random, task: str = "roundest") -> Item:
    correct = rng.choice(["2.5", "30", "1500", "0.75", "40", "250", "0.5", "12"])
    value = float(correct)
    distractors: list[str] = []
    while len(distractors) < 4:
        text = f"{value * rng.uniform(0.6, 1.6):.3g}"
        if len(text.replace(".", "").strip("0")) == 3 and text not in distractors:
            distractors.append(text)
    unit = rng.choice(_UNITS)
    return _item(
        index,
        task,
        f"How much is used in clip {index}?",
        [f"{v} {unit}" for v in [correct, *distractors]],
        0,
        rng,
    )


def planted_twins(index: int, rng: random.Random, task: str = "twins") -> Item:
    kind = index % 4
    if kind == 0:
        options = ["98%", "98 %", "75%", "60%"]
    elif kind == 1:
        base = _phrases(rng, 3)
        options = [base[0], base[0] + ".", base[1], base[2]]
    elif kind == 2:
        base = _phrases(rng, 3)
        options = [f"the {base[0]}", base[0], base[1], base[2]]
    else:
        options = ["0.5 mL", ".5 mL", "0.25 mL", "2 mL"]
    return _item(index, task, f"Which is right for clip {index}?", options, 0, rng)


PLANTED = {
    "longest": planted_longest,
    "middle": planted_middle,
    "roundest": planted_roundest,
    "twins": planted_twins,
}


def clean_release(n: int, seed: int) -> list[Item]:
    """n clean items, half text options (4), half numeric options (5)."""
    rng = random.Random(seed)
    return [clean_text(i, rng) if i % 2 == 0 else clean_number(i, rng) for i in range(n)]


def planted_release(per_group: int, clean: int, seed: int) -> list[Item]:
    """`per_group` items of each planted group (a task each) and `clean` clean items."""
    rng = random.Random(seed)
    items = [planter(i, rng) for planter in PLANTED.values() for i in range(per_group)]
    return items + clean_release(clean, seed + 1)
