"""A stored run's reviewed sample with every optional matcher's verdicts, for the matchers report
(``python -m scoring matchers`` and the Matchers page). Apart from :mod:`.matcher_quality` (pure)
because it reads the database through :mod:`.stored_run`."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from sqlalchemy import Engine

from scoring.core.metric_names import METRIC_COLUMNS
from scoring.estimate.matcher_quality import with_matchers
from scoring.estimate.sample import reviewed_sample
from scoring.estimate.stored_run import StoredRun, stored_final
from scoring.match import MATCHERS, parse_matchers
from scoring.store.run_matchers import chosen_matchers, save_matchers


def stored_matcher_sample(
    engine: Engine, run_id: int, threshold: float | None = None
) -> tuple[StoredRun, pl.DataFrame]:
    """Run ``run_id`` and its sample (the random-sample rule applied) with the matchers' columns;
    ``threshold``: chrF's (default: the setting's)."""
    run = stored_final(engine, run_id)
    sample = reviewed_sample(run.final, run.rank, run.served)
    return run, with_matchers(sample, threshold)


def run_matchers(engine: Engine, run_id: int) -> tuple[str, ...]:
    """The optional matchers switched on for run ``run_id`` (:data:`MATCHERS` order); every one
    while the team has saved no choice. A name this version does not know is passed over."""
    saved = chosen_matchers(engine, run_id)
    return MATCHERS if saved is None else tuple(m for m in MATCHERS if m in saved)


def save_run_matchers(engine: Engine, run_id: int, names: Sequence[str], chosen_by: str = "") -> tuple[str, ...]:
    """Switch on ``names`` (checked: :func:`scoring.match.parse_matchers`) for run ``run_id``."""
    chosen = parse_matchers(list(names))
    save_matchers(engine, run_id, chosen, chosen_by)
    return chosen


def report_set(engine: Engine, run_id: int) -> list[str]:
    """What the matchers report shows by default: the spec's two, then the run's matchers."""
    return [*METRIC_COLUMNS, *run_matchers(engine, run_id)]
