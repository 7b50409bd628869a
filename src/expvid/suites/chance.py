"""Gold answers of other items, for chance baselines on answers that are not a choice.

A free-text or box question has no options to guess among, so "random" would otherwise have no
answer at all and a suite's chance level would be 0 by construction. A real chance baseline
answers with the gold answer of ANOTHER question of the same kind (the same question type, or the
same task and language, as the suite groups them): right only when two questions happen to share an answer
or a judge accepts a near miss. A question never sees its own gold answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass
class ChancePools:
    """Group key -> [(item id, its gold answers)], in load order."""

    groups: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[tuple[str, str, Sequence[str]]]) -> ChancePools:
        """Pools from (group, item id, gold answers) entries."""
        pools = cls()
        for group, item_id, answers in entries:
            texts = tuple(str(answer) for answer in answers if str(answer).strip())
            if texts:
                pools.groups.setdefault(group, []).append((item_id, texts))
        return pools

    def others(self, group: str, item_id: str) -> list[str]:
        """Every gold answer of the group's other items (each answer once per item that has it)."""
        return [
            answer for other, answers in self.groups.get(group, []) if other != item_id for answer in answers
        ]
