"""The JSON API's request bodies as pydantic models: a malformed value is a 422 naming the field.

Why: reading bodies field by field with `int(...)` and `str(...)` turned `"item_version": "abc"`
(or an answer given as an object, or `NaN` as a time) into a 500. Numbers are bounded so that they
also fit the database's integer columns (PostgreSQL refuses larger ones outright).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from expvid.platform.services.content import Content
from expvid.platform.services.errors import InvalidInput
from expvid.platform.services.level2 import StepRow

#: Largest value accepted for versions and ids (PostgreSQL `integer`).
MAX_INT = 2**31 - 1

Version = Annotated[int, Field(ge=0, le=MAX_INT)]
Seconds = Annotated[float, Field(ge=0, le=10**7, allow_inf_nan=False)]
Scalar = str | int


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", str_max_length=10 << 20)


class StepRowBody(_Body):
    ref: Annotated[int, Field(ge=1, le=100_000)] | None = None
    text: str = ""
    start: Seconds | None = None
    end: Seconds | None = None

    def row(self) -> StepRow:
        return StepRow(ref=self.ref, text=self.text, start=self.start, end=self.end)


class ContentBody(_Body):
    question: str
    options: dict[str, Scalar] | None = None
    answer: Scalar | list[Scalar]

    def content(self) -> Content:
        options = {k: str(v) for k, v in self.options.items()} if self.options is not None else None
        return Content(question=self.question, options=options, answer=self.answer)


class DecisionBody(_Body):
    verdict: Literal["approve", "edit", "reject"]
    justification: str = ""
    item_version: Version
    decision_version: Version = 0
    content: ContentBody | None = None
    steps: list[StepRowBody] | None = None


class ResolutionBody(_Body):
    outcome: Literal["verified", "rejected"]
    justification: str = ""
    item_version: Version
    content: ContentBody | None = None
    steps: list[StepRowBody] | None = None


class PreviewBody(_Body):
    steps: list[StepRowBody]


class TokenBody(_Body):
    name: str
    read_only: bool = False
    expires_days: Annotated[float, Field(gt=0, le=3650, allow_inf_nan=False)] | None = None


M = TypeVar("M", bound=BaseModel)


def _where(location: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in location) or "body"


def parse_body(model: type[M], body: dict[str, Any]) -> M:
    """`body` as `model`, or InvalidInput listing each bad field (`item_version: ...`)."""
    try:
        return model.model_validate(body)
    except ValidationError as error:
        problems = [f"{_where(e['loc'])}: {e['msg']}" for e in error.errors(include_url=False)]
        raise InvalidInput(problems) from None
