"""One multiple-choice item as the text-only solvers see it, read once and shared by all of them.

A release of 10,000 items is read by some sixty solvers; each reading (option lengths, numbers,
normal forms, content words, format) is made here once per item. The view never exposes the
answer to a solver: `correct` is kept for scoring the solver's pick afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from expvid.audit.option_text import Number, format_signature, option_key, parse_number
from expvid.ordering.solvers import Perm, orders_by_letter
from expvid.schema import AnswerType, Item

#: Words that never make two texts share content (function words, modal verbs, fillers, question
#: words). Negations are not among them: "soluble" and "not soluble" are different answers.
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "into",
        "onto",
        "from",
        "with",
        "by",
        "for",
        "and",
        "or",
        "as",
        "is",
        "are",
        "be",
        "been",
        "was",
        "were",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "each",
        "all",
        "some",
        "any",
        "then",
        "than",
        "which",
        "what",
        "who",
        "whom",
        "whose",
        "how",
        "when",
        "where",
        "why",
        "while",
        "so",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "need",
        "needs",
        "needed",
        "has",
        "have",
        "had",
        "their",
        "there",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "yes",
        "just",
        "also",
        "please",
        "video",
        "shown",
        "following",
        "option",
        "options",
        "answer",
        "correct",
        "best",
        "most",
        "likely",
    ]
)


def content_sequence(text: str) -> list[str]:
    """The text's words in normal form (`option_key`), in order, without function words and
    one-letter words (numbers kept)."""
    return [w for w in option_key(text).split() if (len(w) > 1 or w.isdigit()) and w not in FUNCTION_WORDS]


def content_words(text: str) -> frozenset[str]:
    """The text's content words (`content_sequence`) as a set."""
    return frozenset(content_sequence(text))


@dataclass
class OptionView:
    """An item's options in letter order with the readings the solvers share."""

    item: Item
    letters: list[str]
    texts: list[str]
    #: Index of the correct option in `letters` (never shown to a solver).
    correct: int
    _numbers: list[Number | None] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, item: Item) -> OptionView | None:
        """The view of a multiple-choice item with two or more options whose answer is one of
        them; None for anything else."""
        if item.answer_type is not AnswerType.CHOICE or not item.options or len(item.options) < 2:
            return None
        letters = list(item.options)
        if str(item.answer) not in letters:
            return None
        return cls(item, letters, [item.options[k] for k in letters], letters.index(str(item.answer)))

    @property
    def k(self) -> int:
        return len(self.letters)

    @property
    def chance(self) -> float:
        return 1.0 / self.k

    @cached_property
    def lengths(self) -> list[int]:
        return [len(" ".join(text.split())) for text in self.texts]

    @cached_property
    def keys(self) -> list[str]:
        return [option_key(text) for text in self.texts]

    @property
    def numbers(self) -> list[Number | None]:
        if self._numbers is None:
            self._numbers = [parse_number(text) for text in self.texts]
        return self._numbers

    @cached_property
    def values(self) -> list[float] | None:
        """The options' values when every option is a number of one dimension (or none has a unit)."""
        numbers = self.numbers
        if any(n is None for n in numbers):
            return None
        dimensions = {n.dimension for n in numbers if n is not None and n.dimension is not None}
        if len(dimensions) > 1:
            return None
        values = [n.value for n in numbers if n is not None]
        return values if len(set(values)) > 1 else None

    @cached_property
    def signatures(self) -> list[dict[str, object]]:
        return [format_signature(text) for text in self.texts]

    @cached_property
    def option_words(self) -> list[frozenset[str]]:
        return [content_words(text) for text in self.texts]

    @cached_property
    def question_words(self) -> frozenset[str]:
        return content_words(self.item.question)

    @cached_property
    def context_words(self) -> frozenset[str]:
        return content_words(self.item.context or "")

    @cached_property
    def orders(self) -> dict[str, Perm] | None:
        """Each option as an order of the item's steps (`expvid.ordering.solvers`), or None."""
        return orders_by_letter(self.item)
