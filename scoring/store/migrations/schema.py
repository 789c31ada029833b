"""The tables as the models declare them, with every model module imported so none is missing."""

from __future__ import annotations

from sqlalchemy import MetaData

from scoring.store import judge_cache  # noqa: F401  (importing them registers their tables)
from scoring.store.engine import Base


def metadata() -> MetaData:
    return Base.metadata
