"""The result of pulling an answer out of a model reply.

An `Extraction` always says *how* it found the answer (`rule`) so that a surprising score can be
traced to the line of text that produced it, and *why* it found nothing (`detail`) when it failed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from expvid.schema import ExtractionStatus


class Extraction(BaseModel):
    """What `extract_answer` found.

    `value` has the shape the item's answer type asks for (a letter, an int, a list of ints, a list
    of strings, the free text, a list of boxes) when `status` is OK, and is None otherwise.
    """

    model_config = ConfigDict(frozen=True)

    status: ExtractionStatus
    value: Any = None
    rule: str
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is ExtractionStatus.OK

    @classmethod
    def found(cls, value: Any, rule: str, detail: str | None = None) -> Extraction:
        return cls(status=ExtractionStatus.OK, value=value, rule=rule, detail=detail)

    @classmethod
    def unparseable(cls, detail: str, rule: str = "none") -> Extraction:
        return cls(status=ExtractionStatus.UNPARSEABLE, value=None, rule=rule, detail=detail)

    @classmethod
    def failed(cls, detail: str = "no response (the request failed)") -> Extraction:
        return cls(status=ExtractionStatus.FAILED, value=None, rule="none", detail=detail)
