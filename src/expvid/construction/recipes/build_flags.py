"""`expvid build` flags that every recipe reads alike: `--price` and `--redo`."""

from __future__ import annotations

from collections.abc import Iterable

import typer

from expvid.construction.accounting import Price, parse_price
from expvid.construction.retries import REDO_STAGES, redo_problem


def prices_of(texts: Iterable[str] | None) -> dict[str, Price]:
    """The `--price` flags (`ROLE=IN,OUT` or `IN,OUT` for all roles) as a price per role; a bad one
    is that flag's error."""
    prices = {}
    for text in texts or []:
        try:
            roles, value = parse_price(text)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--price") from None
        prices.update(dict.fromkeys(roles, value))
    return prices


def redo_of(text: str | None, stages: tuple[str, ...] = REDO_STAGES) -> tuple[str, ...]:
    """The `--redo` flag (`STAGE[:ID],...` of the recipe's `stages`) as its entries; a bad one is the
    flag's error."""
    entries = tuple(part.strip() for part in (text or "").split(",") if part.strip())
    for entry in entries:
        problem = redo_problem(entry, stages)
        if problem is not None:
            raise typer.BadParameter(problem, param_hint="--redo")
    return entries
