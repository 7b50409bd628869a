"""The items list's query parameters, shared by the admin page (`/items`) and the API (`/api/items`)
so that both take the same filters with the same length limits."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

#: Deepest page offset accepted (PostgreSQL refuses OFFSET beyond a bigint; nobody pages that far).
MAX_OFFSET = 10_000_000

SearchText = Annotated[str | None, Query(max_length=200)]
TaskFilter = Annotated[str | None, Query(max_length=48)]
DisciplineFilter = Annotated[str | None, Query(max_length=128)]
StateFilter = Annotated[str | None, Query(max_length=16)]
FlagFilter = Annotated[str | None, Query(max_length=64)]
ReviewerFilter = Annotated[str | None, Query(max_length=64)]
PageOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
