"""The items list's query parameters, shared by the admin page (`/items`) and the API (`/api/items`)
so that both take the same filters with the same length limits."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from expvid.platform.services.search import ItemFilters

#: Deepest page offset accepted (PostgreSQL refuses OFFSET beyond a bigint; nobody pages that far).
MAX_OFFSET = 10_000_000

SearchText = Annotated[str | None, Query(max_length=200)]
TaskFilter = Annotated[str | None, Query(max_length=48)]
DisciplineFilter = Annotated[str | None, Query(max_length=128)]
StateFilter = Annotated[str | None, Query(max_length=16)]
FlagFilter = Annotated[str | None, Query(max_length=64)]
ReviewerFilter = Annotated[str | None, Query(max_length=64)]
PageOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]


def item_filters(
    q: SearchText = None,
    task: TaskFilter = None,
    discipline: DisciplineFilter = None,
    state: StateFilter = None,
    flag: FlagFilter = None,
    reviewer: ReviewerFilter = None,
) -> ItemFilters:
    """The filters a request names; an empty field (a form's unset select) filters nothing."""
    return ItemFilters(
        q=q or None, task=task or None, discipline=discipline or None, state=state or None,
        flag=flag or None, reviewer=reviewer or None,
    )  # fmt: skip


#: Route parameter type: `filters: FiltersQuery` takes all the filters from the query string.
FiltersQuery = Annotated[ItemFilters, Depends(item_filters)]
