"""The languages each reviewer reads (``reader_languages``), read and replaced as names.

The names are cleaned one level up (:func:`scoring.review.reader_languages.clean_languages`), where
the rule that uses them lives; this module only stores them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, delete, insert, select

from scoring.store.engine import writer
from scoring.store.orm_tables import ReaderLanguage, utcnow


def read_languages(engine: Engine, reviewer: str) -> tuple[str, ...]:
    """The languages kept for ``reviewer`` (sorted; none: never set, or cleared)."""
    stmt = select(ReaderLanguage.language).where(ReaderLanguage.reviewer == reviewer)
    with engine.connect() as conn:
        return tuple(sorted(conn.execute(stmt).scalars(), key=str.casefold))


def write_languages(engine: Engine, reviewer: str, languages: Sequence[str]) -> None:
    """Keep ``languages`` for ``reviewer``, replacing what was kept (one transaction)."""
    now = utcnow()
    with writer(engine).begin() as conn:
        conn.execute(delete(ReaderLanguage).where(ReaderLanguage.reviewer == reviewer))
        if languages:
            conn.execute(
                insert(ReaderLanguage), [{"reviewer": reviewer, "language": lang, "set_at": now} for lang in languages]
            )
