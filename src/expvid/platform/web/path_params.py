"""Path parameters the routes share: ids are bounded to the database's integer range, so that an id
beyond any row is a 404 (see the app's validation handler) rather than an error from the database."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from expvid.platform.web.api_models import MAX_INT

ItemId = Annotated[int, Path(ge=1, le=MAX_INT)]
TokenId = Annotated[int, Path(ge=1, le=MAX_INT)]
