"""Which optional matchers a run has switched on (``run_matchers``): read and saved as names.

The names are checked one level up (:func:`scoring.estimate.stored_matchers.run_matchers`), where
the matchers are known; this module only stores them. ``None``: never chosen.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, delete, insert, select

from scoring.store.engine import writer
from scoring.store.orm_tables import RunMatchers, utcnow


def chosen_matchers(engine: Engine, run_id: int) -> tuple[str, ...] | None:
    """The names saved for run ``run_id`` (maybe none), or ``None`` when nothing was ever saved."""
    with engine.connect() as conn:
        text = conn.execute(select(RunMatchers.matchers).where(RunMatchers.run_id == run_id)).scalar_one_or_none()
    return None if text is None else tuple(n for n in text.split(",") if n)


def save_matchers(engine: Engine, run_id: int, names: Sequence[str], chosen_by: str = "") -> None:
    """Store ``names`` as run ``run_id``'s matchers, replacing what was saved."""
    with writer(engine).begin() as conn:
        conn.execute(delete(RunMatchers).where(RunMatchers.run_id == run_id))
        conn.execute(
            insert(RunMatchers).values(run_id=run_id, matchers=",".join(names), chosen_by=chosen_by, chosen_at=utcnow())
        )
