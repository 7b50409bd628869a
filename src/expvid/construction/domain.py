"""Is a distractor out of its experiment's domain? Judged against the experiment and its discipline.

A distractor like "garden hose" for a cell-culture step is implausible: a text-only model rules it
out without the video. The first version of this audit spared a distractor when any of its words
appeared anywhere in the collection; three ordinary lab sentences elsewhere ("vacuum hose",
"hammer", "filter wheel") then spared every such distractor, and at ExpVid's size (390 experiments,
their transcripts and papers) the collection uses nearly every English word, so it flagged nothing.

So a word is judged in its item's CONTEXT: it is in context when the experiment itself uses it (its
transcript, paper, title and the correct answers of its items), or when enough OTHER experiments of
the same discipline use it (at least `MIN_DISCIPLINE` of them and `DISCIPLINE_SHARE` of the
discipline), or enough experiments of the whole collection (at least `MIN_COLLECTION` and
`COLLECTION_SHARE` of it: the common vocabulary of lab work). One other experiment that happens to
mention a hammer does not make "claw hammer" plausible for a pipetting step. A discipline with fewer
than `MIN_PEERS` other experiments (a pilot of a few experiments) has nothing to judge against; there
a word any other experiment of the collection uses is in context.

A distractor is flagged when all its identifying words are everyday English words (a specialised
term the collection never uses, "hemocytometer", is the kind of distractor experts want) and at
least one of them is out of context: "steering wheel" beside a filter wheel. An operation's leading
verb ("Counting cells in a chamber") is not judged: the action is generic lab work, its object decides.
Sparing a distractor when ANY word is in context missed half of these at 390 experiments (a word like
"wheel" is in some context somewhere); flagging on one foreign word flags plausible tools that an
experiment never names ("hydraulic press", "tube furnace"), which a discipline's peers, or in a
pilot the collection, usually do name.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from expvid.media.words import STOPWORDS, content_lemmas, lemma, words

#: Other experiments of the discipline that must use a word for it to be in context there.
MIN_DISCIPLINE = 2
DISCIPLINE_SHARE = 0.1
#: Experiments of the whole collection that must use a word for it to be common lab vocabulary.
MIN_COLLECTION = 3
COLLECTION_SHARE = 0.1
#: Below this many other experiments a discipline is too small to judge against (a pilot build): the
#: collection stands in for it, and a word any other experiment uses is in context.
MIN_PEERS = 5


@dataclass
class DomainVocabulary:
    """Lemmas per experiment, and how many experiments of each discipline (and overall) use each."""

    own: dict[str, set[str]] = field(default_factory=dict)
    discipline_of: dict[str, str] = field(default_factory=dict)
    discipline_df: dict[str, Counter[str]] = field(default_factory=dict)
    discipline_size: Counter[str] = field(default_factory=Counter)
    collection_df: Counter[str] = field(default_factory=Counter)

    def add(self, experiment: str, discipline: str, texts: Iterable[str]) -> None:
        """Add an experiment's texts (call once per experiment, or again to add more of its texts)."""
        lemmas = set()
        for text in texts:
            lemmas |= content_lemmas(text, generic=True)
        new = experiment not in self.own
        known = self.own.setdefault(experiment, set())
        added = lemmas - known
        known |= added
        self.discipline_of[experiment] = discipline
        if new:
            self.discipline_size[discipline] += 1
        self.discipline_df.setdefault(discipline, Counter()).update(added)
        self.collection_df.update(added)

    def in_context(self, word_lemma: str, experiment: str) -> bool:
        own = self.own.get(experiment, set())
        if word_lemma in own:
            return True
        discipline = self.discipline_of.get(experiment, "")
        others = max(0, self.discipline_size[discipline] - (1 if experiment in self.own else 0))
        if others < MIN_PEERS:
            return self.collection_df[word_lemma] >= 1
        needed = max(MIN_DISCIPLINE, math.ceil(DISCIPLINE_SHARE * others))
        if self.discipline_df.get(discipline, Counter())[word_lemma] >= needed:
            return True
        everyone = max(0, len(self.own) - (1 if experiment in self.own else 0))
        return self.collection_df[word_lemma] >= max(MIN_COLLECTION, math.ceil(COLLECTION_SHARE * everyone))


#: Particles and plain qualities that say nothing about a domain ("scraping cells off the plate").
NOT_IDENTIFYING = frozenset({"off", "out", "over", "down", "low", "high", "top", "bottom", "small", "large"})


def identifying_words(text: str) -> list[str]:
    return [
        w
        for w in words(text)
        if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS and w not in NOT_IDENTIFYING
    ]


def foreign_words(
    text: str,
    experiment: str,
    vocabulary: DomainVocabulary,
    everyday: frozenset[str],
    *,
    action: bool = False,
) -> list[str] | None:
    """The words that put `text` out of the experiment's context (module docstring), or None when it
    is plausible there (a specialised word, or every judged word in context)."""
    found = identifying_words(text)
    if not found or any(w not in everyday for w in found):
        return None
    # `action`: an operation ("Scraping cells off the plate"): its leading verb is not judged.
    judged = found[1:] if action and len(found) > 1 and found[0].endswith("ing") else found
    outside = [w for w in judged if not vocabulary.in_context(lemma(w), experiment)]
    return outside or None
