"""Published results kept as data, so reports can print them as reference rows beside a run."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from pydantic import BaseModel


class ReferenceRow(BaseModel):
    """One row of a published results table (scores 0-100; None where the paper has "–")."""

    model: str
    think: bool | None
    group: str
    tasks: dict[str, float | None]
    levels: dict[str, float | None]

    @property
    def label(self) -> str:
        if self.think is None:
            return self.model
        return f"{self.model} ({'think' if self.think else 'no think'})"


class ReferenceTable(BaseModel):
    source: str
    scale: str
    notes: str
    columns: dict[str, str]
    rows: list[ReferenceRow]

    def find(self, model: str, think: bool | None = None) -> list[ReferenceRow]:
        """Rows whose model name contains `model` (case-insensitive), optionally one think setting."""
        wanted = model.casefold()
        return [
            row
            for row in self.rows
            if wanted in row.model.casefold() and (think is None or row.think is think)
        ]


@cache
def expvid_table2() -> ReferenceTable:
    """ExpVid's Table 2: 22 model rows (both think settings where published) and the human row."""
    text = resources.files(__package__).joinpath("expvid_table2.json").read_text(encoding="utf-8")
    return ReferenceTable.model_validate(json.loads(text))
