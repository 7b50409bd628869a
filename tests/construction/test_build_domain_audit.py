"""The out-of-domain distractor audit at ExpVid's size: 390 experiments in 13 disciplines.

The collection is synthetic (no JoVE text is available offline) but built to have the two properties
that broke the first version of the audit: every experiment's narration and paper are lab text (the
sample's eight protocols, recombined), and the collection as a whole uses almost every everyday
English word (each experiment mentions a few hundred ordinary words drawn at random, as real
narrations about benches, timers, foil and tape do; the issue's three ordinary sentences with
"vacuum hose", "hammer" and "filter wheel" appear in a handful of experiments; and each protocol
mentions a quarter of its field's instruments, as protocols of one field share equipment). Each
experiment gets
tool items whose distractors are the lab's own (its protocol's distractor tools, plausible) and
items with the leaky lab's out-of-domain distractors ("garden hose", "claw hammer", "steering wheel").
Measured on this collection (printed with `pytest -s`) and asserted:

- the old rule (spared when any word occurs anywhere in the collection) detects none;
- judged against the experiment and its discipline, every out-of-domain distractor is flagged, and
  few of the lab's own distractors are.
"""

from __future__ import annotations

import random

import pytest
from build_responder import OUT_OF_DOMAIN_TOOLS

from expvid.construction.audits import AuditResult, everyday_words, implausible_distractors
from expvid.construction.domain import DomainVocabulary
from expvid.media.words import STOPWORDS, content_lemmas, lemma, words
from expvid.schema import AnswerType, Item
from expvid.suites.sample.scripts import load_scripts
from expvid.suites.sample.sources import paper_markdown

DISCIPLINES = (
    "Biology", "Chemistry", "Medicine", "Neuroscience", "Bioengineering", "Immunology and Infection",
    "Cancer Research", "Developmental Biology", "Genetics", "Environment", "Engineering",
    "Biochemistry", "Behavior",
)  # fmt: skip
PER_DISCIPLINE = 30
ORDINARY_WORDS = 300
TRAPS = (
    "Connect the vacuum hose to the side arm of the flask.",
    "Tap the mold twice with a small hammer to release the bubbles.",
    "Turn the filter wheel to the GFP position.",
)


def _collection(everyday: frozenset[str]) -> tuple[dict[str, tuple[str, list[str]]], list[Item]]:
    rng = random.Random(18)
    scripts = [s for s in load_scripts() if s.kept]  # the six protocols with distractor lists
    common = sorted(everyday)
    experiments: dict[str, tuple[str, list[str]]] = {}
    items: list[Item] = []
    for d, discipline in enumerate(DISCIPLINES):
        assigned = [scripts[(d * PER_DISCIPLINE + k) % len(scripts)] for k in range(PER_DISCIPLINE)]
        tools = sorted({t for s in assigned for t in [*s.distractor_tools, *(step.tool for step in s.steps)]})
        for k, script in enumerate(assigned):
            video_id = f"{90000 + d * PER_DISCIPLINE + k}"
            texts = [script.title, paper_markdown(script), *(s.narration for s in script.steps)]
            # Protocols of a field use that field's instruments: each mentions some of them.
            texts += [f"Prepare the {tool} before starting." for tool in rng.sample(tools, len(tools) // 4)]
            texts.append(" ".join(rng.sample(common, ORDINARY_WORDS)))
            if rng.random() < 0.05:
                texts.append(rng.choice(TRAPS))
            experiments[video_id] = (discipline, texts)
            step = script.steps[k % len(script.steps)]
            pool = dict.fromkeys([*script.distractor_tools, *(s.tool for s in script.steps)])
            plausible = [t for t in pool if t.casefold() != step.tool.casefold()]
            plausible = rng.sample(plausible, 3)
            for kind, distractors in (("clean", plausible), ("leaky", list(OUT_OF_DOMAIN_TOOLS))):
                options = dict(zip("ABCD", [step.tool, *distractors], strict=True))
                items.append(
                    Item(
                        id=f"tools/{video_id}-{kind}", suite="expvid", task="tools", level=1,
                        discipline=discipline, question="What laboratory tool is being used in this research step?",
                        options=options, answer="A", answer_type=AnswerType.CHOICE, meta={"video_id": video_id},
                    )
                )  # fmt: skip
    return experiments, items


def _old_rule_flags(
    experiments: dict[str, tuple[str, list[str]]], items: list[Item], everyday: frozenset[str]
) -> int:
    """The first version: spared when every word is somewhere in the collection's vocabulary."""
    domain: set[str] = set()
    for _discipline, texts in experiments.values():
        for text in texts:
            domain |= content_lemmas(text, generic=True)
    flagged = 0
    for item in items:
        for letter, text in (item.options or {}).items():
            if letter == item.answer:
                continue
            found = [w for w in words(text) if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS]
            if found and not any(lemma(w) in domain or w not in everyday for w in found):
                flagged += 1
    return flagged


def test_out_of_domain_distractors_are_found_in_a_collection_of_expvid_size(capsys):
    everyday = everyday_words()
    if not everyday:
        pytest.skip("no general-English word list (the MiniLM package is not installed)")
    experiments, items = _collection(everyday)
    vocabulary = DomainVocabulary()
    for video_id, (discipline, texts) in experiments.items():
        vocabulary.add(video_id, discipline, texts)
    result = AuditResult()
    implausible_distractors(items, result, vocabulary, everyday)
    flagged = {
        (item.id, letter)
        for item in items
        for entry in result.flags.get(item.id, [])
        for letter in "BCD"
        if f"option {letter} " in entry["detail"]
    }
    leaky = [(i.id, letter) for i in items if i.id.endswith("-leaky") for letter in "BCD"]
    clean = [
        (i.id, letter)
        for i in items
        if i.id.endswith("-clean")
        for letter in "BCD"
        if letter in (i.options or {})
    ]
    found = sum(key in flagged for key in leaky)
    false = sum(key in flagged for key in clean)
    old = _old_rule_flags(experiments, items, everyday)
    with capsys.disabled():
        print(
            f"\n{len(experiments)} experiments, {len(DISCIPLINES)} disciplines: out-of-domain distractors flagged "
            f"{found}/{len(leaky)} (old rule: {old} of all {len(leaky) + len(clean)} distractors); the lab's own "
            f"distractors flagged {false}/{len(clean)}"
        )
    assert old == 0  # the collection uses every word: the old rule is blind at this size
    # A miss is an experiment whose own text happens to use every word of the distractor (its random
    # ordinary words included "steering", and "wheel" is a word of the field): in context by design.
    assert found / len(leaky) >= 0.98
    assert false / len(clean) <= 0.1


def test_ordinary_sentences_elsewhere_do_not_spare_an_out_of_domain_distractor():
    """Issue 18: "vacuum hose", "hammer" and "filter wheel" said in other experiments spared "garden hose",
    "claw hammer" and "steering wheel" everywhere (36/36 -> 0/36)."""
    everyday = everyday_words()
    if not everyday:
        pytest.skip("no general-English word list (the MiniLM package is not installed)")
    scripts = [s for s in load_scripts() if s.kept]
    vocabulary = DomainVocabulary()
    items = []
    for index, script in enumerate(scripts):
        texts = [script.title, paper_markdown(script), *(s.narration for s in script.steps)]
        if index != 0:  # every other experiment says the three ordinary sentences
            texts += list(TRAPS)
        vocabulary.add(script.video_id, script.discipline, texts)
        options = dict(zip("ABCD", [script.steps[0].tool, *OUT_OF_DOMAIN_TOOLS], strict=True))
        items.append(
            Item(
                id=f"tools/{script.video_id}", suite="expvid", task="tools", level=1, discipline=script.discipline,
                question="Which tool?", options=options, answer="A", answer_type=AnswerType.CHOICE,
                meta={"video_id": script.video_id},
            )
        )  # fmt: skip
    result = AuditResult()
    implausible_distractors(items, result, vocabulary, everyday)
    first = result.flags[f"tools/{scripts[0].video_id}"]
    assert {e["detail"].split('"')[1] for e in first} == set(OUT_OF_DOMAIN_TOOLS)
    # Where the experiment itself says "vacuum hose", "hose" is in context, but "garden" is not.
    assert len(result.flags[f"tools/{scripts[1].video_id}"]) == 3
